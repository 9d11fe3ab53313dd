package stats

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// webNode is a node with one pod, default/web, of two containers: app
// (limit 500m, 64Mi) and sidecar (no limits).
func webNode() (*fakeRuntime, *Provider, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(t0)
	rt := &fakeRuntime{
		sandboxes: []*runtimeapi.PodSandbox{{Id: "sb1", CreatedAt: t0.Add(-time.Minute).UnixNano(),
			Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "uid-1"}}},
		containers: []*runtimeapi.Container{
			{Id: "c-app", PodSandboxId: "sb1", CreatedAt: t0.Add(-50 * time.Second).UnixNano(), Image: &runtimeapi.ImageSpec{Image: "nginx:1.27"}},
			{Id: "c-side", PodSandboxId: "sb1", CreatedAt: t0.Add(-40 * time.Second).UnixNano(), Image: &runtimeapi.ImageSpec{Image: "busybox"}},
		},
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}},
			{Name: "sidecar"}}},
		Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable}}
	p := NewProvider(Options{Node: "node01", Runtime: rt, Selector: map[string]string{"mkube.io/node-name": "node01"},
		Pods: func() []*corev1.Pod { return []*corev1.Pod{pod} },
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")},
		Volumes:   func(context.Context, *corev1.Pod) map[string]int64 { return map[string]int64{"cache": 1000} },
		StartTime: t0.Add(-100 * time.Second), Clock: clk})
	return rt, p, clk
}

func TestSnapshotSumsAndRates(t *testing.T) {
	rt, p, clk := webNode()
	ctx := context.Background()
	rt.stats = []*runtimeapi.ContainerStats{
		containerStats("c-app", "app", t0, 1_000_000_000, 10<<20, 4096),
		containerStats("c-side", "sidecar", t0, 0, 1<<20, 0),
	}
	first, err := p.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sel := range rt.selectors {
		if sel["mkube.io/node-name"] != "node01" {
			t.Errorf("a CRI call asked for %v, want the node's label", sel)
		}
	}
	if got := first.Pods[0].Containers[0].CPU.UsageNanoCores; got != 0 {
		t.Errorf("first sample's rate = %d, want 0 (no previous sample)", got)
	}
	// 10 s later the app used 5 more core-seconds at its 500m limit.
	clk.Step(10 * time.Second)
	t1 := t0.Add(10 * time.Second)
	rt.stats = []*runtimeapi.ContainerStats{
		containerStats("c-app", "app", t1, 6_000_000_000, 12<<20, 4096),
		containerStats("c-side", "sidecar", t1, 100_000_000, 1<<20, 0),
	}
	snap, err := p.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pod := snap.Pods[0]
	app, side := pod.Containers[0], pod.Containers[1]
	tests := []struct {
		name      string
		got, want uint64
	}{
		{"app nanocores", app.CPU.UsageNanoCores, 500_000_000},
		{"sidecar nanocores", side.CPU.UsageNanoCores, 10_000_000},
		{"pod core-ns", pod.CPU.UsageCoreNanoSeconds, 6_100_000_000},
		{"pod nanocores", pod.CPU.UsageNanoCores, 510_000_000},
		{"pod working set", pod.Memory.WorkingSetBytes, 13 << 20},
		// The node: its pods plus 10m and 64 MiB of its own since it started 110 s ago.
		{"node core-ns", snap.Node.CPU.UsageCoreNanoSeconds, 6_100_000_000 + 1_100_000_000},
		{"node nanocores", snap.Node.CPU.UsageNanoCores, 520_000_000},
		{"node working set", snap.Node.Memory.WorkingSetBytes, 13<<20 + 64<<20},
		{"node fs used", snap.Node.FsUsedBytes, 4096 + 1000},
		{"app quota", uint64(app.CPUQuota), 50_000},
		{"app memory limit", app.MemoryLimitBytes, 64 << 20},
		{"app periods", app.Throttling.Periods, 100},
		{"app throttled periods", app.Throttling.ThrottledPeriods, 100},
		{"sidecar periods (no limit)", side.Throttling.Periods, 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
	if app.Throttling.ThrottledSeconds != 5 {
		t.Errorf("app throttled seconds = %v, want 5 (100 periods of 50 ms)", app.Throttling.ThrottledSeconds)
	}
	if app.Image != "nginx:1.27" || pod.QOSClass != "Burstable" || snap.Node.Cores != 4 {
		t.Errorf("image %q, QoS %q, cores %v", app.Image, pod.QOSClass, snap.Node.Cores)
	}
}

func TestPodSandboxStatsWinOverSums(t *testing.T) {
	rt, p, _ := webNode()
	rt.stats = []*runtimeapi.ContainerStats{containerStats("c-app", "app", t0, 1e9, 10<<20, 0)}
	rt.podStats = []*runtimeapi.PodSandboxStats{{Attributes: &runtimeapi.PodSandboxAttributes{Id: "sb1"},
		Linux: &runtimeapi.LinuxPodSandboxStats{Cpu: &runtimeapi.CpuUsage{UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 3e9}},
			Memory: &runtimeapi.MemoryUsage{WorkingSetBytes: &runtimeapi.UInt64Value{Value: 20 << 20}}}}}
	snap, err := p.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Pods[0]; got.CPU.UsageCoreNanoSeconds != 3e9 || got.Memory.WorkingSetBytes != 20<<20 {
		t.Errorf("pod = %+v %+v, want the runtime's pod stats", got.CPU, got.Memory)
	}
}

func TestRatesThrottling(t *testing.T) {
	tests := []struct {
		name            string
		coreNanos       uint64 // used in 1 s
		quota           int64
		wantThrottled   uint64
		wantSecondsOver float64
	}{
		{"idle under a limit", 1e7, 50_000, 0, 0},
		{"busy at a 500m limit", 5e8, 50_000, 10, 0.5},
		{"busy at a 2-core limit", 2e9, 200_000, 10, 0},
		{"no limit", 1e9, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRates()
			r.observe("c", t0, 0, tt.quota, 100_000)
			rate, thr := r.observe("c", t0.Add(time.Second), tt.coreNanos, tt.quota, 100_000)
			if rate != tt.coreNanos {
				t.Errorf("rate = %d, want %d", rate, tt.coreNanos)
			}
			if thr.ThrottledPeriods != tt.wantThrottled || thr.ThrottledSeconds != tt.wantSecondsOver {
				t.Errorf("throttling = %+v, want %d periods, %v s", thr, tt.wantThrottled, tt.wantSecondsOver)
			}
			// A second reading within a second keeps the last rate.
			if again, _ := r.observe("c", t0.Add(1500*time.Millisecond), tt.coreNanos*3, tt.quota, 100_000); again != rate {
				t.Errorf("rate within minRateInterval = %d, want %d", again, rate)
			}
		})
	}
}

func TestServeSummary(t *testing.T) {
	rt, p, _ := webNode()
	rt.stats = []*runtimeapi.ContainerStats{containerStats("c-app", "app", t0, 2e9, 10<<20, 4096)}
	for _, only := range []bool{false, true} {
		target := "/stats/summary"
		if only {
			target += "?only_cpu_and_memory=true"
		}
		w := httptest.NewRecorder()
		p.ServeSummary(w, httptest.NewRequest("GET", target, nil))
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s", target, w.Code, w.Body)
		}
		var s statsapi.Summary
		if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		if s.Node.NodeName != "node01" || len(s.Pods) != 1 || s.Pods[0].PodRef != (statsapi.PodReference{Name: "web", Namespace: "default", UID: "uid-1"}) {
			t.Fatalf("%s: node %q pods %+v", target, s.Node.NodeName, s.Pods)
		}
		c := s.Pods[0].Containers[0]
		if c.Name != "app" || *c.CPU.UsageCoreNanoSeconds != 2e9 || *c.Memory.WorkingSetBytes != 10<<20 ||
			*c.Memory.RSSBytes != 5<<20 || *c.Memory.UsageBytes != 10<<20+100 || *c.Memory.AvailableBytes != 54<<20 {
			t.Errorf("%s: container %+v cpu %+v memory %+v", target, c, c.CPU, c.Memory)
		}
		if *s.Node.Memory.AvailableBytes != 8<<30-(10<<20+64<<20) {
			t.Errorf("node availableBytes = %d", *s.Node.Memory.AvailableBytes)
		}
		if hasFs := s.Node.Fs != nil && s.Pods[0].EphemeralStorage != nil && c.Rootfs != nil && len(s.Pods[0].VolumeStats) == 1; hasFs == only {
			t.Errorf("%s: filesystems present = %v", target, hasFs)
		}
		if !only && (*s.Pods[0].EphemeralStorage.UsedBytes != 5096 || s.Pods[0].VolumeStats[0].Name != "cache") {
			t.Errorf("ephemeral storage %d, volumes %+v", *s.Pods[0].EphemeralStorage.UsedBytes, s.Pods[0].VolumeStats)
		}
	}
}
