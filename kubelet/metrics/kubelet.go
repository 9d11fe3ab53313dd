package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/kubelet/stats"
)

// podStartSLIBuckets are upstream's for kubelet_pod_start_sli_duration_seconds.
var podStartSLIBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}

// Kubelet is a node's own metrics, its /metrics (upstream's
// pkg/kubelet/metrics/metrics.go): pod start latency, pod worker
// durations, running pods and containers, the node's name, and the
// CRI calls.
type Kubelet struct {
	podStartSLI   prometheus.Histogram
	podStartTotal prometheus.Histogram
	podWorker     *prometheus.HistogramVec
	clock         clock.PassiveClock
	mu            sync.Mutex
	startedPods   map[types.UID]bool     // observed in podStartSLI
	pulls         map[types.UID]pullSpan // image pulls of pods not yet started
}

// pullSpan is a pod's image pulls as upstream's pod startup latency
// tracker keeps them: from the first pull's start to the last pull's end.
type pullSpan struct{ first, last time.Time }

// NewKubelet returns node's metrics, registered in reg; runtime counts
// the node's pods and containers (the sandboxes and containers
// labelled with selector).
func NewKubelet(reg prometheus.Registerer, node string, runtime stats.Runtime, selector map[string]string, clk clock.PassiveClock) *Kubelet {
	k := &Kubelet{clock: clk, startedPods: map[types.UID]bool{}, pulls: map[types.UID]pullSpan{},
		podStartSLI: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "pod_start_sli_duration_seconds",
			Help:    "Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch",
			Buckets: podStartSLIBuckets}),
		podStartTotal: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "pod_start_total_duration_seconds",
			Help:    "Duration in seconds to start a pod since creation, including time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch",
			Buckets: podStartSLIBuckets}),
		podWorker: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "pod_worker_duration_seconds",
			Help: "Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync", Buckets: prometheus.DefBuckets},
			[]string{"operation_type"}),
	}
	nodeName := prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "kubelet", Name: "node_name", Help: "The node's name. The count is always 1."}, []string{"node"})
	nodeName.WithLabelValues(node).Set(1)
	reg.MustRegister(k.podStartSLI, k.podStartTotal, k.podWorker, nodeName, running{runtime: runtime, selector: selector})
	return k
}

// ObserveImagePull records that one of the pod's images was pulled from
// start to end (package images calls it), so the pod's start SLI leaves
// the pull out. Pulls after the pod started (a restart's) do not count.
func (k *Kubelet) ObserveImagePull(uid types.UID, start, end time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.startedPods[uid] {
		return
	}
	span, seen := k.pulls[uid]
	if !seen || start.Before(span.first) {
		span.first = start
	}
	if end.After(span.last) {
		span.last = end
	}
	k.pulls[uid] = span
}

// Forget drops what k knows of the pod with uid: it is gone.
func (k *Kubelet) Forget(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.startedPods, uid)
	delete(k.pulls, uid)
}

// ObservePodStatus observes the pod's start latency the first time its
// status says all its containers have started: from its creation to the
// status the kubelet wrote, in full (kubelet_pod_start_total_duration_seconds)
// and less the span of its image pulls, first start to last end, as
// upstream's SLI (kubelet_pod_start_sli_duration_seconds). Unlike
// upstream the time init containers ran is not subtracted.
func (k *Kubelet) ObservePodStatus(pod *corev1.Pod) {
	if pod == nil || len(pod.Status.ContainerStatuses) < len(pod.Spec.Containers) {
		return
	}
	for _, st := range pod.Status.ContainerStatuses {
		if st.State.Running == nil {
			return
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.startedPods[pod.UID] {
		return
	}
	k.startedPods[pod.UID] = true
	total := k.clock.Since(pod.CreationTimestamp.Time)
	var pulling time.Duration
	if span, ok := k.pulls[pod.UID]; ok {
		pulling = span.last.Sub(span.first)
		delete(k.pulls, pod.UID)
	}
	k.podStartTotal.Observe(total.Seconds())
	k.podStartSLI.Observe((total - pulling).Seconds())
}

// TimeSync wraps a pod worker's sync, observing its duration as "sync".
func (k *Kubelet) TimeSync(sync func(context.Context, string) error) func(context.Context, string) error {
	return func(ctx context.Context, key string) error {
		start := k.clock.Now()
		defer func() { k.podWorker.WithLabelValues("sync").Observe(k.clock.Since(start).Seconds()) }()
		return sync(ctx, key)
	}
}

var (
	runningPodsDesc       = prometheus.NewDesc("kubelet_running_pods", "Number of pods that have a running pod sandbox", nil, nil)
	runningContainersDesc = prometheus.NewDesc("kubelet_running_containers", "Number of containers currently running",
		[]string{"container_state"}, nil)
)

// running counts the node's sandboxes and containers by state, asking the
// runtime at each scrape as upstream's collectors do.
type running struct {
	runtime  stats.Runtime
	selector map[string]string
}

func (r running) Describe(ch chan<- *prometheus.Desc) {
	ch <- runningPodsDesc
	ch <- runningContainersDesc
}

func (r running) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	if sandboxes, err := r.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}, LabelSelector: r.selector}}); err == nil {
		ch <- prometheus.MustNewConstMetric(runningPodsDesc, prometheus.GaugeValue, float64(len(sandboxes.GetItems())))
	}
	containers, err := r.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: r.selector}})
	if err != nil {
		return
	}
	states := map[string]int{"created": 0, "running": 0, "exited": 0, "unknown": 0}
	for _, c := range containers.GetContainers() {
		states[containerState(c.GetState())]++
	}
	for state, n := range states {
		ch <- prometheus.MustNewConstMetric(runningContainersDesc, prometheus.GaugeValue, float64(n), state)
	}
}

func containerState(s runtimeapi.ContainerState) string {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return "created"
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return "running"
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return "exited"
	}
	return "unknown"
}
