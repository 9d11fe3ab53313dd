package cri

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A container reads its cgroup settings in /sys/fs/cgroup, as on a
// cgroup v2 node; UpdateContainerResources (an in-place resize) changes
// them for the running process, and its status reports them.
func TestAContainerSeesItsCgroupAndAResizeChangesIt(t *testing.T) {
	h := newHarness(t, Options{})
	podID := h.runPod(t, "p")
	h.pull(t, "busybox")
	cfg := containerConfig("c", "busybox")
	cfg.Command = []string{"sleep", "3600"}
	cfg.Linux = &runtimeapi.LinuxContainerConfig{Resources: &runtimeapi.LinuxContainerResources{
		CpuShares: 102, CpuPeriod: 100000, CpuQuota: 20000, MemoryLimitInBytes: 64 << 20}}
	id := h.create(t, podID, cfg)
	h.start(t, id)
	read := func() string {
		t.Helper()
		r, err := h.rt.ExecSync(h.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Timeout: 1,
			Cmd: []string{"sh", "-c", "head -n 1 /sys/fs/cgroup/cpu.max; cat /sys/fs/cgroup/cpu.weight /sys/fs/cgroup/memory.max; mount -t cgroup2"}})
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("exec: %v %q", err, r.GetStderr())
		}
		return string(r.Stdout)
	}
	const mountLine = "cgroup2 on /sys/fs/cgroup type cgroup2 (ro,relatime)\n"
	if got, want := read(), "20000 100000\n4\n67108864\n"+mountLine; got != want {
		t.Errorf("before the resize:\n%s\nwant:\n%s", got, want)
	}
	// A resize to 1 CPU without a cpu limit, and no memory limit.
	if _, err := h.rt.UpdateContainerResources(h.ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: id,
		Linux: &runtimeapi.LinuxContainerResources{CpuShares: 1024}}); err != nil {
		t.Fatal(err)
	}
	if got, want := read(), "max 100000\n39\nmax\n"+mountLine; got != want {
		t.Errorf("after the resize:\n%s\nwant:\n%s", got, want)
	}
	if res := h.containerStatus(t, id).GetResources().GetLinux(); res.GetCpuShares() != 1024 || res.GetCpuQuota() != 0 || res.GetMemoryLimitInBytes() != 0 {
		t.Errorf("the status reports %v", res)
	}
	if _, err := h.rt.UpdateContainerResources(h.ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: "nope"}); err == nil {
		t.Error("resizing a container that does not exist succeeded")
	}
}
