package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/kubelet/prober"
	"github.com/mkube/mkube/kubelet/stats"
)

// fakeRuntime is a node with one ready sandbox and containers in the
// given states, none with stats.
type fakeRuntime struct{ states []runtimeapi.ContainerState }

func (f fakeRuntime) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{{Id: "sb1",
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "uid-1"}}}}, nil
}

func (f fakeRuntime) ListContainers(context.Context, *runtimeapi.ListContainersRequest, ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	var out []*runtimeapi.Container
	for _, s := range f.states {
		out = append(out, &runtimeapi.Container{State: s})
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

func (f fakeRuntime) ListContainerStats(context.Context, *runtimeapi.ListContainerStatsRequest, ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error) {
	return &runtimeapi.ListContainerStatsResponse{}, nil
}

func (f fakeRuntime) ListPodSandboxStats(context.Context, *runtimeapi.ListPodSandboxStatsRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	return &runtimeapi.ListPodSandboxStatsResponse{}, nil
}

func newTestEndpoints(clk *clocktesting.FakeClock) *Endpoints {
	rt := fakeRuntime{states: []runtimeapi.ContainerState{runtimeapi.ContainerState_CONTAINER_RUNNING,
		runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_EXITED}}
	return NewEndpoints(Options{Node: "node01", MachineID: "m1", RuntimeOps: NewRuntimeOperations(clk), Process: ProcessCollectors(), Clock: clk,
		Stats: stats.Options{Node: "node01", Runtime: rt, StartTime: t0.Add(-time.Minute), Clock: clk}})
}

func TestKubeletMetrics(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	e := newTestEndpoints(clk)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1", CreationTimestamp: metav1.NewTime(t0)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}}
	e.Kubelet.ObservePodStatus(pod) // no status yet: not started
	clk.Step(1500 * time.Millisecond)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	e.Kubelet.ObservePodStatus(pod)
	clk.Step(time.Minute)
	e.Kubelet.ObservePodStatus(pod) // observed once only
	sync := e.Kubelet.TimeSync(func(context.Context, string) error { clk.Step(20 * time.Millisecond); return nil })
	sync(context.Background(), "default/web")
	body := "\n" + get(t, e.Handler(PathMetrics)) + "\n"
	wantLines(t, body,
		`kubelet_node_name{node="node01"} 1`,
		"kubelet_running_pods 1",
		`kubelet_running_containers{container_state="running"} 2`,
		`kubelet_running_containers{container_state="exited"} 1`,
		`kubelet_running_containers{container_state="created"} 0`,
		"kubelet_pod_start_sli_duration_seconds_count 1",
		"kubelet_pod_start_sli_duration_seconds_sum 1.5",
		`kubelet_pod_start_sli_duration_seconds_bucket{le="2"} 1`,
		`kubelet_pod_start_sli_duration_seconds_bucket{le="1"} 0`,
		`kubelet_pod_worker_duration_seconds_count{operation_type="sync"} 1`,
		`kubelet_pod_worker_duration_seconds_bucket{operation_type="sync",le="0.025"} 1`,
	)
	for _, family := range []string{"go_goroutines", "process_start_time_seconds"} {
		if !strings.Contains(body, "\n# TYPE "+family) {
			t.Errorf("no %s in /metrics", family)
		}
	}
}

// A pod whose image pull took 5 s: the SLI leaves the pull out, the
// total keeps it; two pulls count from the first start to the last end,
// and a pull after the pod started (a restart's) is not recorded.
func TestPodStartSLIExcludesImagePulls(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	e := newTestEndpoints(clk)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1", CreationTimestamp: metav1.NewTime(t0)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}}}}
	clk.Step(time.Second)
	e.Kubelet.ObserveImagePull(pod.UID, clk.Now(), clk.Now().Add(3*time.Second)) // app's image: 1 s → 4 s
	clk.Step(2 * time.Second)
	e.Kubelet.ObserveImagePull(pod.UID, clk.Now(), clk.Now().Add(3*time.Second)) // sidecar's: 3 s → 6 s
	clk.Step(4500 * time.Millisecond)                                            // started at 7.5 s
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: running}, {Name: "sidecar", State: running}}
	e.Kubelet.ObservePodStatus(pod)
	e.Kubelet.ObserveImagePull(pod.UID, clk.Now(), clk.Now().Add(time.Minute)) // a restart's pull: ignored
	body := "\n" + get(t, e.Handler(PathMetrics)) + "\n"
	wantLines(t, body,
		"kubelet_pod_start_sli_duration_seconds_count 1",
		"kubelet_pod_start_sli_duration_seconds_sum 2.5", // 7.5 s less the 5 s of pulls
		`kubelet_pod_start_sli_duration_seconds_bucket{le="2"} 0`,
		`kubelet_pod_start_sli_duration_seconds_bucket{le="3"} 1`,
		"kubelet_pod_start_total_duration_seconds_count 1",
		"kubelet_pod_start_total_duration_seconds_sum 7.5",
		`kubelet_pod_start_total_duration_seconds_bucket{le="6"} 0`,
		`kubelet_pod_start_total_duration_seconds_bucket{le="8"} 1`,
	)
	if n := len(e.Kubelet.pulls); n != 0 {
		t.Errorf("%d pods' pulls kept after they started", n)
	}
	e.Kubelet.Forget(pod.UID)
	if e.Kubelet.startedPods[pod.UID] {
		t.Error("Forget kept the pod")
	}
}

type fixedProbe struct {
	result prober.Result
	clock  *clocktesting.FakeClock
}

func (f fixedProbe) Run(context.Context, prober.Target) (prober.Result, string) {
	f.clock.Step(30 * time.Millisecond)
	return f.result, ""
}

func TestProbeMetrics(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	e := newTestEndpoints(clk)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	target := func(kind prober.Kind) prober.Target {
		return prober.Target{Pod: pod, Container: corev1.Container{Name: "app"}, Kind: kind}
	}
	tests := []struct {
		kind   prober.Kind
		result prober.Result
		runs   int
	}{
		{prober.Readiness, prober.Success, 3},
		{prober.Readiness, prober.Failure, 1},
		{prober.Liveness, prober.Success, 2},
		{prober.Startup, prober.Unknown, 1},
	}
	for _, tt := range tests {
		r := e.Probes.Runner(fixedProbe{result: tt.result, clock: clk}, clk)
		for range tt.runs {
			if got, _ := r.Run(context.Background(), target(tt.kind)); got != tt.result {
				t.Fatalf("runner changed the result: %v", got)
			}
		}
	}
	body := "\n" + get(t, e.Handler(PathMetricsProbes)) + "\n"
	wantLines(t, body,
		`prober_probe_total{container="app",namespace="default",pod="web",pod_uid="uid-1",probe_type="Readiness",result="successful"} 3`,
		`prober_probe_total{container="app",namespace="default",pod="web",pod_uid="uid-1",probe_type="Readiness",result="failed"} 1`,
		`prober_probe_total{container="app",namespace="default",pod="web",pod_uid="uid-1",probe_type="Liveness",result="successful"} 2`,
		`prober_probe_total{container="app",namespace="default",pod="web",pod_uid="uid-1",probe_type="Startup",result="unknown"} 1`,
		`prober_probe_duration_seconds_count{container="app",namespace="default",pod="web",probe_type="Readiness"} 4`,
		`prober_probe_duration_seconds_bucket{container="app",namespace="default",pod="web",probe_type="Readiness",le="0.05"} 4`,
	)
}

func TestEndpointsPaths(t *testing.T) {
	e := newTestEndpoints(clocktesting.NewFakeClock(t0))
	for _, path := range Paths {
		if e.Handler(path) == nil {
			t.Errorf("no handler for %s", path)
		}
	}
	if e.Handler("/metrics/nope") != nil {
		t.Error("a handler for an unknown path")
	}
	// The node with no containers' stats still reports itself: the system's share.
	wantLines(t, "\n"+get(t, e.Handler(PathMetricsResource))+"\n", "node_memory_working_set_bytes 6.7108864e+07 1767323045000")
	if s := get(t, e.Handler(PathStatsSummary)); !strings.Contains(s, `"nodeName": "node01"`) {
		t.Errorf("summary: %s", s)
	}
}
