package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/controllermanager/podautoscaler/metrics"
)

// The cases are those of upstream's replica_calculator_test.go (its
// test names in the case names): pods of two containers, each container
// requesting the pod's request and using the pod's level, so a pod's
// request and usage are twice the numbers in the table. The tuning is
// upstream's test tuning: tolerance 0.1, cpu initialization period 2
// minutes, initial readiness delay 10 seconds; a "hot" pod started now,
// a "cool" one 3 minutes ago.

var calcNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const (
	cool = iota // the zero value: a pod started long ago
	hot
)

// podsCase describes the selected pods; nil slices mean running, ready,
// cool, not being deleted.
type podsCase struct {
	count     int
	readiness []corev1.ConditionStatus
	start     []int // cool or hot
	phase     []corev1.PodPhase
	deleting  []bool
	requests  []string // cpu request of each container of pod i; fewer than count: the rest request nothing
}

func (p podsCase) pods() []*corev1.Pod {
	n := max(p.count, len(p.phase))
	var out []*corev1.Pod
	for i := range n {
		ready, phase := corev1.ConditionTrue, corev1.PodRunning
		if i < len(p.readiness) {
			ready = p.readiness[i]
		}
		if p.phase != nil {
			phase = p.phase[i]
		}
		start := calcNow.Add(-3 * time.Minute)
		if p.start != nil && p.start[i] == hot {
			start = calcNow
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("test-pod-%d", i), Namespace: "test-namespace"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "container0"}, {Name: "container1"}}},
			Status: corev1.PodStatus{Phase: phase, StartTime: &metav1.Time{Time: start},
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
		if p.deleting != nil && p.deleting[i] {
			pod.DeletionTimestamp = &metav1.Time{Time: calcNow}
		}
		if i < len(p.requests) {
			for c := range pod.Spec.Containers {
				pod.Spec.Containers[c].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(p.requests[i])}
			}
		}
		out = append(out, pod)
	}
	return out
}

// fakeMetrics serves fixed samples, as the metrics APIs would.
type fakeMetrics struct {
	pods     metrics.PodMetricsInfo // resource or raw per-pod samples
	object   int64
	external []int64
	err      error
}

var errNoMetrics = errors.New("no metrics returned from resource metrics API")

func (f *fakeMetrics) GetResourceMetric(context.Context, corev1.ResourceName, string, labels.Selector, string) (metrics.PodMetricsInfo, time.Time, error) {
	if f.err != nil {
		return nil, time.Time{}, f.err
	}
	if len(f.pods) == 0 {
		return nil, time.Time{}, errNoMetrics
	}
	return copyInfo(f.pods), time.Time{}, nil
}

func (f *fakeMetrics) GetRawMetric(context.Context, string, string, labels.Selector, labels.Selector) (metrics.PodMetricsInfo, time.Time, error) {
	return copyInfo(f.pods), time.Time{}, f.err
}

func (f *fakeMetrics) GetObjectMetric(context.Context, string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return f.object, time.Time{}, f.err
}

func (f *fakeMetrics) GetExternalMetric(context.Context, string, string, labels.Selector) ([]int64, time.Time, error) {
	return f.external, time.Time{}, f.err
}

func copyInfo(m metrics.PodMetricsInfo) metrics.PodMetricsInfo {
	out := metrics.PodMetricsInfo{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// samples are per-pod values with a window of a minute, taken at the
// zero time (upstream's cases leave the timestamp unset).
func samples(values []int64, names ...string) metrics.PodMetricsInfo {
	out := metrics.PodMetricsInfo{}
	for i, v := range values {
		name := fmt.Sprintf("test-pod-%d", i)
		if i < len(names) {
			name = names[i]
		}
		out[name] = metrics.PodMetric{Value: v, Window: time.Minute}
	}
	return out
}

func newTestCalculator(pods []*corev1.Pod, m metrics.Client) *ReplicaCalculator {
	return &ReplicaCalculator{metrics: m, pods: func(string, labels.Selector) []*corev1.Pod { return pods },
		tolerances: tolerances{0.1, 0.1}, cpuInitializationPeriod: 2 * time.Minute, delayOfInitialReadinessStatus: 10 * time.Second,
		clock: clocktesting.NewFakePassiveClock(calcNow), log: slog.New(slog.DiscardHandler)}
}

func ones(n int) []string { return strings.Split(strings.Repeat("1.0,", n)[:4*n-1], ",") }

func doubled(levels ...int64) []int64 {
	out := make([]int64, len(levels))
	for i, l := range levels {
		out[i] = 2 * l
	}
	return out
}

func TestResourceReplicas(t *testing.T) {
	F, T := corev1.ConditionFalse, corev1.ConditionTrue
	R, P, X := corev1.PodRunning, corev1.PodPending, corev1.PodFailed
	tests := []struct {
		name       string
		pods       podsCase
		levels     []int64 // per container
		podNames   []string
		current    int32
		target     int32
		want       int32
		wantUtil   int32
		wantRaw    int64
		wantErrHas string
	}{
		{name: "DisjointResourcesMetrics", pods: podsCase{count: 1, requests: ones(1)}, levels: []int64{100}, podNames: []string{"an-older-pod-name"},
			current: 1, target: 100, wantErrHas: "no metrics returned matched known pods"},
		{name: "ScaleUp", pods: podsCase{count: 3, requests: ones(3)}, levels: []int64{300, 500, 700}, current: 3, target: 30, want: 5, wantUtil: 50, wantRaw: 1000},
		{name: "ScaleUpUnreadyLessScale", pods: podsCase{count: 3, requests: ones(3), readiness: []corev1.ConditionStatus{F, T, T}},
			levels: []int64{300, 500, 700}, current: 3, target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "ScaleUpHotCpuLessScale", pods: podsCase{count: 3, requests: ones(3), start: []int{hot, cool, cool}},
			levels: []int64{300, 500, 700}, current: 3, target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "ScaleUpUnreadyNoScale", pods: podsCase{count: 3, requests: ones(3), readiness: []corev1.ConditionStatus{T, F, F}},
			levels: []int64{400, 500, 700}, current: 3, target: 30, want: 3, wantUtil: 40, wantRaw: 800},
		{name: "ScaleHotCpuNoScale", pods: podsCase{count: 3, requests: ones(3), readiness: []corev1.ConditionStatus{T, F, F}, start: []int{cool, hot, hot}},
			levels: []int64{400, 500, 700}, current: 3, target: 30, want: 3, wantUtil: 40, wantRaw: 800},
		{name: "ScaleUpIgnoresFailedPods", pods: podsCase{requests: ones(4), readiness: []corev1.ConditionStatus{T, T, F, F}, phase: []corev1.PodPhase{R, R, X, X}},
			levels: []int64{500, 700}, current: 2, target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "ScaleUpIgnoresDeletionPods", pods: podsCase{requests: ones(4), readiness: []corev1.ConditionStatus{T, T, F, F}, phase: []corev1.PodPhase{R, R, R, R}, deleting: []bool{false, false, true, true}},
			levels: []int64{500, 700}, current: 2, target: 30, want: 4, wantUtil: 60, wantRaw: 1200},
		{name: "ScaleDown", pods: podsCase{count: 5, requests: ones(5)}, levels: []int64{100, 300, 500, 250, 250}, current: 5, target: 50, want: 3, wantUtil: 28, wantRaw: 560},
		{name: "ScaleDownIncludeUnreadyPods", pods: podsCase{count: 5, requests: ones(5), readiness: []corev1.ConditionStatus{T, T, T, F, F}},
			levels: []int64{100, 300, 500, 250, 250}, current: 5, target: 50, want: 2, wantUtil: 30, wantRaw: 600},
		{name: "ScaleDownExcludeUnscheduledPods", pods: podsCase{requests: ones(5), readiness: []corev1.ConditionStatus{T, F, F, F, F}, phase: []corev1.PodPhase{R, P, P, P, P}},
			levels: []int64{100}, current: 5, target: 50, want: 1, wantUtil: 10, wantRaw: 200},
		{name: "ScaleDownIgnoreHotCpuPods", pods: podsCase{count: 5, requests: ones(5), start: []int{cool, cool, cool, hot, hot}},
			levels: []int64{100, 300, 500, 250, 250}, current: 5, target: 50, want: 2, wantUtil: 30, wantRaw: 600},
		{name: "ScaleDownIgnoresFailedPods", pods: podsCase{requests: ones(7), readiness: []corev1.ConditionStatus{T, T, T, T, T, F, F}, phase: []corev1.PodPhase{R, R, R, R, R, X, X}},
			levels: []int64{100, 300, 500, 250, 250}, current: 5, target: 50, want: 3, wantUtil: 28, wantRaw: 560},
		{name: "ScaleDownIgnoresDeletionPods", pods: podsCase{requests: ones(7), readiness: []corev1.ConditionStatus{T, T, T, T, T, F, F}, phase: []corev1.PodPhase{R, R, R, R, R, R, R},
			deleting: []bool{false, false, false, false, false, true, true}},
			levels: []int64{100, 300, 500, 250, 250}, current: 5, target: 50, want: 3, wantUtil: 28, wantRaw: 560},
		{name: "Tolerance", pods: podsCase{count: 3, requests: []string{"0.9", "1.0", "1.1"}}, levels: []int64{1010, 1030, 1020}, current: 3, target: 100, want: 3, wantUtil: 102, wantRaw: 2040},
		{name: "SuperfluousMetrics", pods: podsCase{count: 4, requests: ones(4)}, levels: []int64{4000, 9500, 3000, 7000, 3200, 2000}, current: 4, target: 100, want: 24, wantUtil: 587, wantRaw: 11750},
		{name: "MissingMetrics", pods: podsCase{count: 4, requests: ones(4)}, levels: []int64{400, 95}, current: 4, target: 100, want: 3, wantUtil: 24, wantRaw: 495},
		{name: "EmptyMetrics", pods: podsCase{count: 3, requests: ones(3)}, current: 4, target: 100,
			wantErrHas: "unable to get metrics for resource cpu: no metrics returned from resource metrics API"},
		{name: "EmptyCPURequest", pods: podsCase{count: 1}, levels: []int64{200}, current: 1, target: 100, wantErrHas: "missing request for cpu"},
		{name: "MissingMetricsNoChangeEq", pods: podsCase{count: 2, requests: ones(2)}, levels: []int64{1000}, current: 2, target: 100, want: 2, wantUtil: 100, wantRaw: 2000},
		{name: "MissingMetricsNoChangeGt", pods: podsCase{count: 2, requests: ones(2)}, levels: []int64{1900}, current: 2, target: 100, want: 2, wantUtil: 190, wantRaw: 3800},
		{name: "MissingMetricsNoChangeLt", pods: podsCase{count: 2, requests: ones(2)}, levels: []int64{600}, current: 2, target: 100, want: 2, wantUtil: 60, wantRaw: 1200},
		{name: "MissingMetricsUnreadyChange", pods: podsCase{count: 3, requests: ones(3), readiness: []corev1.ConditionStatus{F, T, T}},
			levels: []int64{100, 450}, current: 3, target: 50, want: 3, wantUtil: 45, wantRaw: 900},
		{name: "MissingMetricsHotCpuNoChange", pods: podsCase{count: 3, requests: ones(3), start: []int{hot, cool, cool}},
			levels: []int64{100, 450}, current: 3, target: 50, want: 3, wantUtil: 45, wantRaw: 900},
		{name: "MissingMetricsUnreadyScaleUp", pods: podsCase{count: 3, requests: ones(3), readiness: []corev1.ConditionStatus{F, T, T}},
			levels: []int64{100, 2000}, current: 3, target: 50, want: 4, wantUtil: 200, wantRaw: 4000},
		{name: "MissingMetricsHotCpuScaleUp", pods: podsCase{count: 3, requests: ones(3), readiness: []corev1.ConditionStatus{F, T, T}, start: []int{hot, cool, cool}},
			levels: []int64{100, 2000}, current: 3, target: 50, want: 4, wantUtil: 200, wantRaw: 4000},
		{name: "MissingMetricsUnreadyScaleDown", pods: podsCase{count: 4, requests: ones(4), readiness: []corev1.ConditionStatus{F, T, T, T}},
			levels: []int64{100, 100, 100}, current: 4, target: 50, want: 3, wantUtil: 10, wantRaw: 200},
		{name: "DuringRollingUpdateWithMaxSurge", pods: podsCase{requests: ones(3), phase: []corev1.PodPhase{R, R, R}},
			levels: []int64{100, 100}, current: 2, target: 50, want: 2, wantUtil: 10, wantRaw: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calc := newTestCalculator(tt.pods.pods(), &fakeMetrics{pods: samples(doubled(tt.levels...), tt.podNames...)})
			got, util, raw, _, err := calc.GetResourceReplicas(context.Background(), tt.current, tt.target, corev1.ResourceCPU, "test-namespace", labels.Everything(), "")
			if tt.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrHas) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || util != tt.wantUtil || raw != tt.wantRaw {
				t.Errorf("replicas, utilization, raw = %d, %d, %d; want %d, %d, %d", got, util, raw, tt.want, tt.wantUtil, tt.wantRaw)
			}
		})
	}
}

func TestCustomMetricReplicas(t *testing.T) {
	F, T := corev1.ConditionFalse, corev1.ConditionTrue
	deployment := &autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Name: "some-deployment"}
	metricSelector := &metav1.LabelSelector{MatchLabels: map[string]string{"label": "value"}}
	type source int
	const (
		pods source = iota
		object
		objectPerPod
		external
		externalPerPod
	)
	tests := []struct {
		name      string
		source    source
		readiness []corev1.ConditionStatus
		start     []int
		levels    []int64
		current   int32
		target    int64
		want      int32
		wantUsage int64
	}{
		{name: "ScaleUpCM", source: pods, levels: []int64{20000, 10000, 30000}, current: 3, target: 15000, want: 4, wantUsage: 20000},
		{name: "ScaleUpCMUnreadyHotCpuNoLessScale", source: pods, readiness: []corev1.ConditionStatus{T, T, F}, start: []int{cool, cool, hot},
			levels: []int64{50000, 10000, 30000}, current: 3, target: 15000, want: 6, wantUsage: 30000},
		{name: "ScaleUpCMUnreadyHotCpuScaleWouldScaleDown", source: pods, readiness: []corev1.ConditionStatus{F, T, F}, start: []int{hot, cool, hot},
			levels: []int64{50000, 15000, 30000}, current: 3, target: 15000, want: 7, wantUsage: 31666},
		{name: "ScaleUpCMExternalNoLabels", source: pods, levels: []int64{8600}, current: 1, target: 4400, want: 2, wantUsage: 8600},
		{name: "ScaleDownCM", source: pods, levels: []int64{12000, 12000, 12000, 12000, 12000}, current: 5, target: 20000, want: 3, wantUsage: 12000},
		{name: "ToleranceCM", source: pods, levels: []int64{20000, 21000, 21000}, current: 3, target: 20000, want: 3, wantUsage: 20666},
		{name: "ScaleUpCMObject", source: object, levels: []int64{20000}, current: 3, target: 15000, want: 4, wantUsage: 20000},
		{name: "ScaleUpCMObjectIgnoresUnreadyPods", source: object, readiness: []corev1.ConditionStatus{F, T, F}, levels: []int64{50000}, current: 3, target: 10000, want: 5, wantUsage: 50000},
		{name: "ScaleDownCMObject", source: object, levels: []int64{12000}, current: 5, target: 20000, want: 3, wantUsage: 12000},
		{name: "ToleranceCMObject", source: object, levels: []int64{20666}, current: 3, target: 20000, want: 3, wantUsage: 20666},
		{name: "ScaleUpCMPerPodObject", source: objectPerPod, levels: []int64{20000}, current: 3, target: 5000, want: 4, wantUsage: 6667},
		{name: "ScaleDownPerPodCMObject", source: objectPerPod, levels: []int64{6000}, current: 5, target: 2000, want: 3, wantUsage: 1200},
		{name: "TolerancePerPodCMObject", source: objectPerPod, levels: []int64{20166}, current: 4, target: 5000, want: 4, wantUsage: 5042},
		{name: "ScaleUpCMExternalIgnoresUnreadyPods", source: external, readiness: []corev1.ConditionStatus{F, T, F}, levels: []int64{8600}, current: 3, target: 4400, want: 2, wantUsage: 8600},
		{name: "ScaleDownCMExternal", source: external, levels: []int64{8600}, current: 5, target: 14334, want: 3, wantUsage: 8600},
		{name: "ToleranceCMExternal", source: external, levels: []int64{8600}, current: 3, target: 8888, want: 3, wantUsage: 8600},
		{name: "ScaleUpPerPodCMExternal", source: externalPerPod, levels: []int64{8600}, current: 3, target: 2150, want: 4, wantUsage: 2867},
		{name: "ScaleDownPerPodCMExternal", source: externalPerPod, levels: []int64{8600}, current: 5, target: 2867, want: 3, wantUsage: 1720},
		{name: "TolerancePerPodCMExternal", source: externalPerPod, levels: []int64{8600}, current: 3, target: 2900, want: 3, wantUsage: 2867},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			podList := podsCase{count: int(tt.current), readiness: tt.readiness, start: tt.start}.pods()
			fake := &fakeMetrics{pods: samples(tt.levels), external: tt.levels}
			if len(tt.levels) > 0 {
				fake.object = tt.levels[0]
			}
			calc := newTestCalculator(podList, fake)
			var got int32
			var usage int64
			var err error
			switch tt.source {
			case pods:
				got, usage, _, err = calc.GetMetricReplicas(ctx, tt.current, tt.target, "qps", "test-namespace", labels.Everything(), labels.Everything())
			case object:
				got, usage, _, err = calc.GetObjectMetricReplicas(ctx, tt.current, tt.target, "qps", "test-namespace", deployment, labels.Everything(), labels.Everything())
			case objectPerPod:
				got, usage, _, err = calc.GetObjectPerPodMetricReplicas(ctx, tt.current, tt.target, "qps", "test-namespace", deployment, labels.Everything())
			case external:
				got, usage, _, err = calc.GetExternalMetricReplicas(ctx, tt.current, tt.target, "qps", "test-namespace", metricSelector, labels.Everything())
			case externalPerPod:
				got, usage, _, err = calc.GetExternalPerPodMetricReplicas(ctx, tt.current, tt.target, "qps", "test-namespace", metricSelector)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || usage != tt.wantUsage {
				t.Errorf("replicas, usage = %d, %d; want %d, %d", got, usage, tt.want, tt.wantUsage)
			}
		})
	}
}

// A behavior's tolerance of one direction replaces the flag's for it.
func TestPerDirectionTolerance(t *testing.T) {
	c := &Controller{calc: newTestCalculator(nil, nil)}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: &autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resource.MustParse("0.5"))}}}}
	tol := c.tolerancesFor(hpa)
	if tol != (tolerances{scaleDown: 0.1, scaleUp: 0.5}) {
		t.Fatalf("tolerances %v, want -0.1/+0.5", tol)
	}
	if tol := c.tolerancesFor(&autoscalingv2.HorizontalPodAutoscaler{}); tol != (tolerances{0.1, 0.1}) {
		t.Fatalf("without a behavior: %v, want the flag's", tol)
	}
	podList := podsCase{count: 3}.pods()
	for _, tt := range []struct {
		tol  tolerances
		want int32
	}{{tolerances{0.1, 0.1}, 5}, {tolerances{0.1, 0.5}, 3}} {
		calc := newTestCalculator(podList, &fakeMetrics{pods: samples([]int64{21000, 21000, 21000})}).withTolerances(tt.tol)
		got, _, _, err := calc.GetMetricReplicas(context.Background(), 3, 15000, "qps", "test-namespace", labels.Everything(), labels.Everything())
		if err != nil || got != tt.want {
			t.Errorf("usage 1.4 × target, tolerances %v: %d, %v; want %d", tt.tol, got, err, tt.want)
		}
	}
}

// Requests are summed over the containers and the sidecars (init
// containers that keep running), or taken of one container for a
// ContainerResource metric.
func TestCalculatePodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	cpu := func(q string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0"}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "setup"}, {Name: "proxy", RestartPolicy: &always, Resources: cpu("50m")}},
		Containers:     []corev1.Container{{Name: "app", Resources: cpu("200m")}, {Name: "log", Resources: cpu("10m")}}}}
	for container, want := range map[string]int64{"": 260, "app": 200, "proxy": 50} {
		got, err := calculatePodRequests([]*corev1.Pod{pod}, container, corev1.ResourceCPU)
		if err != nil || got["web-0"] != want {
			t.Errorf("container %q: %v, %v; want %dm", container, got, err, want)
		}
	}
	pod.Spec.Containers[1].Resources = corev1.ResourceRequirements{}
	if _, err := calculatePodRequests([]*corev1.Pod{pod}, "", corev1.ResourceCPU); err == nil || err.Error() != "missing request for cpu in container log of Pod web-0" {
		t.Errorf("a container without a request: %v", err)
	}
}
