package podautoscaler

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
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

// BenchmarkHPASyncRound is the HPA controller's time per autoscaler at
// 1,000 autoscalers (MKUBE_BENCH_HPAS sets how many): one op is a sync
// round, every autoscaler synced once by the controller's 5 workers, as
// a sync period brings them, and µs/HPA is the round's time over the
// autoscalers.
//
//	go test -run '^$' -bench HPASyncRound -benchtime 10x ./controllermanager/podautoscaler/
//
// It runs in-process, not against the real binaries: the controller
// reads its autoscalers and pods from its informers and reads and writes
// the scale subresource and the status through a real API server (the
// package's in-process test server, on loopback HTTP, as the controller
// manager talks to it); only the metrics are a fake (metrics.Client),
// since their cost is the metrics server's and the aggregator's, not the
// controller's. Each autoscaler targets its own Deployment of 2 running
// pods, each using 50 % of its CPU request: on target, so a steady
// round scales nothing and writes nothing (the round before the timed
// ones writes every status: first-round-µs/HPA). The pods' scan for a
// selector is per namespace, so there are two layouts: every
// autoscaler in one namespace, and each in its own.
func BenchmarkHPASyncRound(b *testing.B) {
	n := 1000
	if v, _ := strconv.Atoi(os.Getenv("MKUBE_BENCH_HPAS")); v > 0 {
		n = v
	}
	e := startBench(b)
	layouts := []struct {
		name      string
		namespace func(i int) string
	}{
		{"OneNamespace", func(int) string { return "default" }},
		{"NamespaceEach", func(i int) string { return fmt.Sprintf("hpa-%d", i) }},
	}
	for _, l := range layouts {
		keys := e.autoscalers(b, l.name, n, l.namespace)
		first := e.round(b, keys)
		e.waitStatuses(b, keys)
		b.Run(fmt.Sprintf("%dHPAs_%s", n, l.name), func(b *testing.B) {
			b.ResetTimer()
			for range b.N {
				e.round(b, keys)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/HPA")
			b.ReportMetric(float64(first.Microseconds())/float64(n), "first-round-µs/HPA")
		})
	}
}

// benchEnv is the controller on an in-process API server, its informers
// running, its metrics benchMetrics.
type benchEnv struct {
	c    *client.Client
	clk  *clocktesting.FakeClock
	ctrl *Controller
}

func startBench(b *testing.B) *benchEnv {
	url := testserver.Start(b)
	e := &benchEnv{c: client.New(url, "hpa-bench"), clk: clocktesting.NewFakeClock(time.Now().Truncate(time.Second))}
	d := controller.NewDeps(e.c, slog.New(slog.DiscardHandler), e.clk)
	e.ctrl = New(d, Options{Metrics: &benchMetrics{clk: e.clk}})
	testserver.Background(b, d.Run)
	return e
}

// benchUsage is each pod's CPU: half of its 200m request, the target.
const benchUsage = 100

// benchMetrics answers the two pods of a selector app=NAME (NAME-0 and
// NAME-1) at benchUsage, found by name, not by a scan that would add
// to the controller's own: a new map each time, as the REST client's
// is (the calculator deletes from it).
type benchMetrics struct{ clk *clocktesting.FakeClock }

func (f *benchMetrics) GetResourceMetric(_ context.Context, _ corev1.ResourceName, _ string, selector labels.Selector, _ string) (metrics.PodMetricsInfo, time.Time, error) {
	now := f.clk.Now()
	app, ok := selector.RequiresExactMatch("app")
	if !ok {
		return nil, now, fmt.Errorf("selector %q has no app", selector)
	}
	out := metrics.PodMetricsInfo{}
	for p := range 2 {
		out[fmt.Sprintf("%s-%d", app, p)] = metrics.PodMetric{Value: benchUsage, Timestamp: now, Window: 15 * time.Second}
	}
	return out, now, nil
}

func (*benchMetrics) GetRawMetric(context.Context, string, string, labels.Selector, labels.Selector) (metrics.PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("not served")
}

func (*benchMetrics) GetObjectMetric(context.Context, string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 0, time.Time{}, fmt.Errorf("not served")
}

func (*benchMetrics) GetExternalMetric(context.Context, string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("not served")
}

// autoscalers writes n Deployments (prefix-i, 2 replicas), their pods,
// running and ready for ten minutes as kubelets would report them, and an
// autoscaler of each at 50 % CPU; it waits for the controller's caches
// to hold them and returns the autoscalers' keys.
func (e *benchEnv) autoscalers(b *testing.B, prefix string, n int, namespace func(int) string) []string {
	ctx := context.Background()
	prefix = strings.ToLower(prefix)
	must := func(err error) {
		if err != nil {
			b.Error(err)
		}
	}
	keys := make([]string, n)
	started := metav1.NewTime(e.clk.Now().Add(-10 * time.Minute))
	inParallel(n, func(i int) {
		ns, name := namespace(i), fmt.Sprintf("%s-%d", prefix, i)
		keys[i] = ns + "/" + name
		if ns != "default" {
			must(e.c.Create(ctx, client.Namespaces, "", &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: ns}}, nil))
		}
		app := map[string]string{"app": name}
		dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: app},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: app},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/hpa-example"}}}}}}
		must(e.c.Create(ctx, client.Deployments, ns, dep, dep))
		dep.Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2}
		must(e.c.UpdateStatus(ctx, client.Deployments, ns, name, dep, nil))
		for p := range 2 {
			pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, p), Namespace: ns, Labels: app},
				Spec: corev1.PodSpec{NodeName: "node01", Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/hpa-example",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}}}}}
			must(e.c.Create(ctx, client.Pods, ns, pod, pod))
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}}
			must(e.c.UpdateStatus(ctx, client.Pods, ns, pod.Name, pod, nil))
		}
		hpa := &autoscalingv2.HorizontalPodAutoscaler{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 10, Metrics: cpuUtilization(50),
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}}}
		must(e.c.Create(ctx, HorizontalPodAutoscalers, ns, hpa, nil))
	})
	if b.Failed() {
		b.FailNow()
	}
	testserver.EventuallyWithin(b, time.Minute, "the caches hold the autoscalers and their running pods", func() (bool, string) {
		synced := 0
		for _, key := range keys {
			ns, name, _ := strings.Cut(key, "/")
			_, ok := e.ctrl.hpas.Cache().Get(key)
			pods := e.ctrl.podsMatching(ns, labels.SelectorFromSet(labels.Set{"app": name}))
			if ok && len(pods) == 2 && pods[0].Status.Phase == corev1.PodRunning && pods[1].Status.Phase == corev1.PodRunning {
				synced++
			}
		}
		return synced == n, fmt.Sprintf("%d of %d", synced, n)
	})
	return keys
}

// round syncs every key once on the controller's workers and returns
// how long that took. A sync that left its autoscaler unable to scale
// fails the benchmark: it would time an error path.
func (e *benchEnv) round(b *testing.B, keys []string) time.Duration {
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range e.ctrl.workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(keys); i = int(next.Add(1)) - 1 {
				if err := e.ctrl.sync(context.Background(), keys[i]); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	// The check reads the server, the benchmark's timer stopped: one
	// autoscaler's status says whether the syncs did what a round does.
	b.StopTimer()
	defer b.StartTimer()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	ns, name, _ := strings.Cut(keys[len(keys)-1], "/")
	if err := e.c.Get(context.Background(), HorizontalPodAutoscalers, ns, name, hpa); err != nil {
		b.Fatal(err)
	}
	if hpa.Status.CurrentReplicas != 2 || hpa.Status.DesiredReplicas != 2 || len(hpa.Status.CurrentMetrics) != 1 {
		b.Fatalf("%s's status after a round: current %d, desired %d, metrics %d; want 2, 2, 1", keys[len(keys)-1],
			hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas, len(hpa.Status.CurrentMetrics))
	}
	return took
}

// waitStatuses waits for the controller's cache to hold the statuses the
// first round wrote: a round on older copies would write them again.
func (e *benchEnv) waitStatuses(b *testing.B, keys []string) {
	testserver.EventuallyWithin(b, time.Minute, "the cache holds every autoscaler's status", func() (bool, string) {
		written := 0
		for _, key := range keys {
			if obj, ok := e.ctrl.hpas.Cache().Get(key); ok && len(obj.(*autoscalingv2.HorizontalPodAutoscaler).Status.CurrentMetrics) == 1 {
				written++
			}
		}
		return written == len(keys), fmt.Sprintf("%d of %d", written, len(keys))
	})
}

// inParallel runs f(0..n-1) on 8 goroutines.
func inParallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}
