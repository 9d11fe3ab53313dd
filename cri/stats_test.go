package cri

import (
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// idleCPU is what d of an idle container accrues: 5 microcores.
func idleCPU(d time.Duration) uint64 { return uint64(d / 200000) }

// CRI's stats report what a container's program uses on the runtime's
// clock: a busy loop a core, half a core under a 500m limit (with every
// CFS period throttled, as its cpu.stat says), a sleeping one almost
// nothing; the pod's stats add them up with its pause process.
func TestStatsReportTheCPUAContainerUses(t *testing.T) {
	h := newHarness(t, Options{})
	podID := h.runPod(t, "p")
	h.pull(t, "busybox")
	tests := []struct {
		name   string
		script string
		quota  int64
		want   uint64 // ns over 10 s
	}{
		{"busy", "while true; do :; done", 0, uint64(10 * time.Second)},
		{"capped", "yes > /dev/null", 50000, uint64(5 * time.Second)},
		{"idle", "while true; do sleep 1; done", 0, 0},
	}
	ids := map[string]string{}
	for _, tt := range tests {
		cfg := containerConfig(tt.name, "busybox")
		cfg.Command = []string{"sh", "-c", tt.script}
		if tt.quota > 0 {
			cfg.Linux = &runtimeapi.LinuxContainerConfig{Resources: &runtimeapi.LinuxContainerResources{CpuPeriod: 100000, CpuQuota: tt.quota}}
		}
		ids[tt.name] = h.create(t, podID, cfg)
		h.start(t, ids[tt.name])
	}
	demand := func(name string) float64 {
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		return h.srv.containers[ids[name]].resources.cpu.Demand()
	}
	waitFor(t, "the busy ones busy", func() bool { return demand("busy") == 1 && demand("capped") == 1 && h.clock.Waiters() >= 2 })
	h.clock.Step(10 * time.Second)

	for _, tt := range tests {
		st, err := h.rt.ContainerStats(h.ctx, &runtimeapi.ContainerStatsRequest{ContainerId: ids[tt.name]})
		if err != nil {
			t.Fatal(err)
		}
		cpu := st.GetStats().GetCpu()
		if got, want := cpu.GetUsageCoreNanoSeconds().GetValue(), tt.want+idleCPU(10*time.Second); got != want {
			t.Errorf("%s: usage_core_nano_seconds %d, want %d", tt.name, got, want)
		}
		if got, want := cpu.GetUsageNanoCores().GetValue(), (tt.want+idleCPU(10*time.Second))/10; got != want {
			t.Errorf("%s: usage_nano_cores %d, want %d", tt.name, got, want)
		}
	}

	r, err := h.rt.ExecSync(h.ctx, &runtimeapi.ExecSyncRequest{ContainerId: ids["capped"], Timeout: 1, Cmd: []string{"cat", "/sys/fs/cgroup/cpu.stat"}})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("exec: %v %q", err, r.GetStderr())
	}
	if got, want := string(r.Stdout), "usage_usec 5000050\nuser_usec 5000050\nsystem_usec 0\nnr_periods 100\nnr_throttled 100\nthrottled_usec 5000000\nnr_bursts 0\nburst_usec 0\n"; got != want {
		t.Errorf("the capped container's cpu.stat:\n%s\nwant:\n%s", got, want)
	}

	list, err := h.rt.ListPodSandboxStats(h.ctx, &runtimeapi.ListPodSandboxStatsRequest{})
	if err != nil || len(list.GetStats()) != 1 {
		t.Fatalf("ListPodSandboxStats: %v %v", list, err)
	}
	pod := list.GetStats()[0]
	if got, want := pod.GetLinux().GetCpu().GetUsageCoreNanoSeconds().GetValue(), uint64(15*time.Second)+4*idleCPU(10*time.Second); got != want {
		t.Errorf("the pod's usage_core_nano_seconds %d, want %d", got, want)
	}
	if got := len(pod.GetLinux().GetContainers()); got != 3 || pod.GetAttributes().GetId() != podID {
		t.Errorf("the pod's stats: %s with %d containers", pod.GetAttributes().GetId(), got)
	}

	// Two seconds more, the busy one stopped after one: the rate is over
	// the last window, and a stopped container's usage stays.
	h.clock.Step(time.Second)
	if _, err := h.rt.StopContainer(h.ctx, &runtimeapi.StopContainerRequest{ContainerId: ids["busy"]}); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(time.Second)
	st, err := h.rt.ContainerStats(h.ctx, &runtimeapi.ContainerStatsRequest{ContainerId: ids["busy"]})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.GetStats().GetCpu().GetUsageCoreNanoSeconds().GetValue(), uint64(11*time.Second)+idleCPU(11*time.Second); got != want {
		t.Errorf("stopped after 11 s: usage %d, want %d", got, want)
	}
	if got, want := st.GetStats().GetCpu().GetUsageNanoCores().GetValue(), (uint64(time.Second)+idleCPU(time.Second))/2; got != want {
		t.Errorf("stopped after 11 s: the rate over the last 2 s is %d nanocores, want %d", got, want)
	}
	ps, err := h.rt.PodSandboxStats(h.ctx, &runtimeapi.PodSandboxStatsRequest{PodSandboxId: podID})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ps.GetStats().GetLinux().GetContainers()); got != 2 {
		t.Errorf("PodSandboxStats lists %d running containers, want 2", got)
	}
}
