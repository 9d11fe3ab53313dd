package podautoscaler

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/podautoscaler/metrics"
	"github.com/mkube/mkube/internal/testserver"
)

// The controller tests run the controller's informers against a real API
// server and call sync by hand, one sync period apart on a fake clock;
// the pods' CPU comes from a fake of metrics.k8s.io, and the pods
// themselves are written as a kubelet would (no kubelet runs here).

// usageMetrics serves every selected pod at the same CPU usage, which the
// test changes as a load would.
type usageMetrics struct {
	mu         sync.Mutex
	milliCores int64
	pods       func() []*corev1.Pod
	clock      *clocktesting.FakeClock
}

func (u *usageMetrics) set(milliCores int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.milliCores = milliCores
}

func (u *usageMetrics) GetResourceMetric(_ context.Context, _ corev1.ResourceName, _ string, selector labels.Selector, _ string) (metrics.PodMetricsInfo, time.Time, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := metrics.PodMetricsInfo{}
	for _, pod := range u.pods() {
		if selector.Matches(labels.Set(pod.Labels)) {
			out[pod.Name] = metrics.PodMetric{Value: u.milliCores, Timestamp: u.clock.Now(), Window: 15 * time.Second}
		}
	}
	return out, u.clock.Now(), nil
}

func (u *usageMetrics) GetRawMetric(context.Context, string, string, labels.Selector, labels.Selector) (metrics.PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("not served")
}

func (u *usageMetrics) GetObjectMetric(context.Context, string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 0, time.Time{}, fmt.Errorf("not served")
}

func (u *usageMetrics) GetExternalMetric(context.Context, string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("not served")
}

type tickingClock struct {
	*clocktesting.FakeClock
	ticks atomic.Int64
}

func (c *tickingClock) Now() time.Time { return c.FakeClock.Now().Add(time.Duration(c.ticks.Add(1))) }

type env struct {
	t    *testing.T
	c    *client.Client
	url  string
	clk  *clocktesting.FakeClock
	ctrl *Controller
	load *usageMetrics
}

// start runs an API server and the controller's informers and event
// sender. proxy, if given, puts a server of the test's in front of the
// API server, which the controller talks to instead. Without a metrics
// client in o, the pods' CPU is e.load's.
func start(t *testing.T, o Options, proxy func(string) string) *env {
	url := testserver.Start(t)
	e := &env{t: t, c: client.New(url, "hpa-test"), url: url, clk: clocktesting.NewFakeClock(time.Now().Truncate(time.Second))}
	target := e.c
	if proxy != nil {
		target = client.New(proxy(url), "hpa-test")
	}
	d := controller.NewDeps(target, slog.New(slog.DiscardHandler), e.clk)
	// One sync may post two events of one autoscaler (FailedGetScale and
	// FailedComputeMetricsReplicas); on a clock that does not move they
	// would share a name (record.WithClock), so each event is a
	// nanosecond later than the last.
	d.Recorder = d.Recorder.WithClock(&tickingClock{FakeClock: e.clk})
	if o.Metrics == nil {
		e.load = &usageMetrics{clock: e.clk}
		o.Metrics = e.load
	}
	e.ctrl = New(d, o)
	if e.load != nil {
		e.load.pods = func() []*corev1.Pod { return e.ctrl.podsMatching("default", labels.Everything()) }
	}
	testserver.Background(t, d.Run)
	return e
}

// runningPod writes a pod of app=web requesting 200m of cpu, running and
// ready for ten minutes, as its kubelet would report it.
func (e *env) runningPod(name string) {
	e.t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node01", Containers: []corev1.Container{{Name: "php-apache", Image: "registry.k8s.io/hpa-example",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}}}}}
	if err := e.c.Create(ctx, client.Pods, "default", pod, pod); err != nil {
		e.t.Fatal(err)
	}
	started := metav1.NewTime(e.clk.Now().Add(-10 * time.Minute))
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}}
	if err := e.c.UpdateStatus(ctx, client.Pods, "default", name, pod, pod); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) createHPA(name string, ref autoscalingv2.CrossVersionObjectReference, metricSpecs []autoscalingv2.MetricSpec, behavior *autoscalingv2.HorizontalPodAutoscalerBehavior) {
	e.t.Helper()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MinReplicas: ptr.To[int32](1), MaxReplicas: 10,
			Metrics: metricSpecs, Behavior: behavior}}
	if err := e.c.Create(context.Background(), HorizontalPodAutoscalers, "default", hpa, hpa); err != nil {
		e.t.Fatal(err)
	}
}

func cpuUtilization(percent int32) []autoscalingv2.MetricSpec {
	return []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(percent)}}}}
}

// syncAfter steps the clock by d and syncs the autoscaler once its cache
// has caught up with the server (pods and the autoscaler itself), as
// the next timed sync would; it returns the autoscaler as stored.
func (e *env) syncAfter(d time.Duration, name string, podCount int) *autoscalingv2.HorizontalPodAutoscaler {
	e.t.Helper()
	ctx := context.Background()
	stored := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := e.c.Get(ctx, HorizontalPodAutoscalers, "default", name, stored); err != nil {
		e.t.Fatal(err)
	}
	testserver.Eventually(e.t, "the caches have the autoscaler and the pods", func() (bool, string) {
		obj, ok := e.ctrl.hpas.Cache().Get("default/" + name)
		pods := len(e.ctrl.podsMatching("default", labels.Everything()))
		return ok && obj.(*autoscalingv2.HorizontalPodAutoscaler).ResourceVersion == stored.ResourceVersion && pods == podCount,
			fmt.Sprintf("%d pods", pods)
	})
	e.clk.Step(d)
	if err := e.ctrl.sync(ctx, "default/"+name); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.Get(ctx, HorizontalPodAutoscalers, "default", name, stored); err != nil {
		e.t.Fatal(err)
	}
	return stored
}

// wantConditions checks each condition's status and reason.
func wantConditions(t *testing.T, hpa *autoscalingv2.HorizontalPodAutoscaler, want ...string) {
	t.Helper()
	var got []string
	for _, c := range hpa.Status.Conditions {
		got = append(got, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("conditions %v lack %s", got, w)
		}
	}
}

// wantEvent waits for an event of the autoscaler with reason and message.
func (e *env) wantEvent(name, reason, message string) {
	e.t.Helper()
	testserver.Eventually(e.t, fmt.Sprintf("event %s %q", reason, message), func() (bool, string) {
		var list corev1.EventList
		if err := e.c.List(context.Background(), client.Events, "default", client.ListOptions{}, &list); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name == name && ev.InvolvedObject.Kind == "HorizontalPodAutoscaler" {
				if ev.Reason == reason && strings.Contains(ev.Message, message) && ev.Source.Component == EventComponent {
					return true, ""
				}
				seen = append(seen, ev.Reason+": "+ev.Message)
			}
		}
		return false, strings.Join(seen, "; ")
	})
}

func (e *env) replicas(res client.Resource, name string) int32 {
	e.t.Helper()
	var d appsv1.Deployment
	if err := e.c.Get(context.Background(), res, "default", name, &d); err != nil {
		e.t.Fatal(err)
	}
	return *d.Spec.Replicas
}

func TestHPAScalesADeploymentUpUnderLoadAndDownAfterTheWindow(t *testing.T) {
	e := start(t, Options{DownscaleStabilizationWindow: time.Minute}, nil)
	ctx := context.Background()
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "php-apache", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "php-apache", Image: "registry.k8s.io/hpa-example"}}}}}}
	if err := e.c.Create(ctx, client.Deployments, "default", dep, dep); err != nil {
		t.Fatal(err)
	}
	e.runningPod("php-apache-0")
	// As the walkthrough's older `kubectl autoscale` does, at autoscaling/v1:
	// the API server stores it as v2, which the controller reads.
	v1 := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"php-apache"},
	"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"php-apache"},"minReplicas":1,"maxReplicas":10,"targetCPUUtilizationPercentage":50}}`
	if err := e.c.Do(ctx, "POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", json.RawMessage(v1), nil); err != nil {
		t.Fatal(err)
	}

	// Under load: 400m of a 200m request is 200%, four times the target.
	// (Without a behavior one step may reach max(2 × 1, 4) = 4 at most;
	// more load would be cut to 4, but its proposal would stay in the
	// window and lift the next sync's count to it, as upstream does.)
	e.load.set(400)
	hpa := e.syncAfter(DefaultSyncPeriod, "php-apache", 1)
	if got := e.replicas(client.Deployments, "php-apache"); got != 4 {
		t.Fatalf("replicas %d after the load, want 4", got)
	}
	if hpa.Status.CurrentReplicas != 1 || hpa.Status.DesiredReplicas != 4 || hpa.Status.LastScaleTime == nil {
		t.Errorf("status current %d desired %d lastScaleTime %v, want 1, 4, set", hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas, hpa.Status.LastScaleTime)
	}
	if m := hpa.Status.CurrentMetrics; len(m) != 1 || m[0].Resource == nil || *m[0].Resource.Current.AverageUtilization != 200 {
		t.Errorf("currentMetrics %+v, want cpu at 200%%", m)
	}
	wantConditions(t, hpa, "AbleToScale=True/SucceededRescale", "ScalingActive=True/ValidMetricFound", "ScalingLimited=False/DesiredWithinRange")
	e.wantEvent("php-apache", ReasonSuccessfulRescale, "New size: 4; reason: cpu resource utilization (percentage of request) above target")

	// The deployment controller and the kubelets would bring 3 more pods.
	for i := 1; i < 4; i++ {
		e.runningPod(fmt.Sprintf("php-apache-%d", i))
	}
	// The load stops: 20m is 10%, so one pod would do, but the window
	// (shortened to a minute) still holds the recommendation of 4.
	e.load.set(20)
	hpa = e.syncAfter(DefaultSyncPeriod, "php-apache", 4)
	if got := e.replicas(client.Deployments, "php-apache"); got != 4 {
		t.Fatalf("replicas %d within the stabilization window, want 4", got)
	}
	wantConditions(t, hpa, "AbleToScale=True/ScaleDownStabilized", "ScalingActive=True/ValidMetricFound")
	hpa = e.syncAfter(time.Minute, "php-apache", 4)
	if got := e.replicas(client.Deployments, "php-apache"); got != 1 {
		t.Fatalf("replicas %d after the window, want 1", got)
	}
	if hpa.Status.DesiredReplicas != 1 || *hpa.Status.CurrentMetrics[0].Resource.Current.AverageUtilization != 10 {
		t.Errorf("status desired %d, currentMetrics %+v; want 1 at 10%%", hpa.Status.DesiredReplicas, hpa.Status.CurrentMetrics)
	}
	wantConditions(t, hpa, "AbleToScale=True/SucceededRescale", "ScalingLimited=False/DesiredWithinRange")
	e.wantEvent("php-apache", ReasonSuccessfulRescale, "New size: 1; reason: All metrics below target")
}

// Run syncs each autoscaler once a period has passed on its clock.
func TestHPASyncsEveryPeriodOnItsClock(t *testing.T) {
	e := start(t, Options{SyncPeriod: 30 * time.Second}, nil)
	e.deployment("web")
	e.runningPod("web-0")
	e.createHPA("web", autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, cpuUtilization(50), nil)
	e.load.set(400)
	testserver.Background(t, e.ctrl.Run)
	testserver.Eventually(t, "a sync once 30 s have passed", func() (bool, string) {
		// The sync is timed when the informer hands over the autoscaler;
		// until then a step of the clock times nothing.
		e.clk.Step(30 * time.Second)
		got := e.replicas(client.Deployments, "web")
		return got == 4, fmt.Sprintf("replicas %d", got)
	})
}
