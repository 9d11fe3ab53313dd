package podautoscaler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/podautoscaler/metrics"
	"github.com/mkube/mkube/internal/testserver"
)

// restMetrics is a placeholder that keeps start from installing its fake
// load; the test then gives the calculator the real client, which reads
// the metrics APIs through the API server (serving none here).
type restMetrics struct{ metrics.Client }

func (e *env) deployment(name string) {
	e.t.Helper()
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	if err := e.c.Create(context.Background(), client.Deployments, "default", dep, dep); err != nil {
		e.t.Fatal(err)
	}
}

// With no metrics API served, each kind of metric leaves ScalingActive
// False with Kubernetes' reason, and nothing is scaled.
func TestHPAReportsMetricsAPIsNotServed(t *testing.T) {
	e := start(t, Options{Metrics: &restMetrics{}}, nil)
	e.ctrl.calc.metrics = metrics.NewREST(e.c, e.ctrl.scales.resourceFor)
	e.deployment("web")
	e.runningPod("web-0")
	ref := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	kq := resource.MustParse("1k")
	tests := []struct {
		name    string
		metric  autoscalingv2.MetricSpec
		reason  string
		message string
		event   string
	}{
		{"cpu", cpuUtilization(50)[0], "FailedGetResourceMetric",
			"the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API:",
			"invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API:"},
		{"pods", autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "packets-per-second"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &kq}}},
			"FailedGetPodsMetric", "the HPA was unable to compute the replica count: unable to get metric packets-per-second: unable to fetch metrics from custom metrics API:",
			"invalid metrics (1 invalid out of 1), first error is: failed to get pods metric value: unable to get metric packets-per-second: unable to fetch metrics from custom metrics API:"},
		{"object", autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main-route"},
			Metric:          autoscalingv2.MetricIdentifier{Name: "requests-per-second"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &kq}}},
			"FailedGetObjectMetric", "the HPA was unable to compute the replica count: unable to get metric requests-per-second: unable to fetch metrics from custom metrics API:",
			"first error is: failed to get object metric value: unable to get metric requests-per-second: unable to fetch metrics from custom metrics API:"},
		{"external", autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "queue_messages_ready", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"queue": "worker_tasks"}}},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(30, resource.DecimalSI)}}},
			"FailedGetExternalMetric", "the HPA was unable to compute the replica count: unable to get external metric default/queue_messages_ready/",
			"first error is: failed to get queue_messages_ready external metric value: unable to get external metric default/queue_messages_ready/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			e.createHPA(tt.name, ref, []autoscalingv2.MetricSpec{tt.metric}, nil)
			hpa := e.syncAfter(DefaultSyncPeriod, tt.name, 1)
			wantConditions(t, hpa, "AbleToScale=True/SucceededGetScale", "ScalingActive=False/"+tt.reason)
			for _, c := range hpa.Status.Conditions {
				if c.Type == autoscalingv2.ScalingActive && !strings.HasPrefix(c.Message, tt.message) {
					t.Errorf("ScalingActive's message %q, want it to start %q", c.Message, tt.message)
				}
			}
			if hpa.Status.CurrentReplicas != 1 || e.replicas(client.Deployments, "web") != 1 {
				t.Errorf("currentReplicas %d, deployment at %d; want 1, untouched", hpa.Status.CurrentReplicas, e.replicas(client.Deployments, "web"))
			}
			e.wantEvent(tt.name, tt.reason, strings.TrimPrefix(tt.message, "the HPA was unable to compute the replica count: "))
			e.wantEvent(tt.name, ReasonFailedComputeMetricsReplicas, tt.event)
		})
	}
}

// scaleRequests stands in front of the API server, passing every
// request on, and counts those to CronTabs' scale subresource by method:
// the API server serves it, as the definition's subresources.scale asks.
type scaleRequests struct {
	mu       sync.Mutex
	byMethod map[string]int
}

func (s *scaleRequests) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byMethod[method]
}

func (s *scaleRequests) proxy(t *testing.T) func(string) string {
	scalePath := regexp.MustCompile(`^/apis/stable\.example\.com/v1/namespaces/[^/]+/crontabs/[^/]+/scale$`)
	return func(apiURL string) string {
		target, _ := url.Parse(apiURL)
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.FlushInterval = -1 // watches stream
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if scalePath.MatchString(r.URL.Path) {
				s.mu.Lock()
				s.byMethod[r.Method]++
				s.mu.Unlock()
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// An autoscaler on a custom resource scales it through its scale
// subresource, the resource found by discovery from the kind.
func TestHPAScalesACustomResourceThroughItsScaleSubresource(t *testing.T) {
	requests := &scaleRequests{byMethod: map[string]int{}}
	e := start(t, Options{}, requests.proxy(t))
	ctx := context.Background()
	crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "crontabs.stable.example.com"},
		"spec": map[string]any{"group": "stable.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				"subresources": map[string]any{"status": map[string]any{}, "scale": map[string]any{
					"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.labelSelector"}}}}}}
	if err := e.c.Do(ctx, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, nil); err != nil {
		t.Fatal(err)
	}
	crPath := "/apis/stable.example.com/v1/namespaces/default/crontabs"
	testserver.Eventually(t, "crontabs are served", func() (bool, string) {
		err := e.c.Do(ctx, "GET", crPath, nil, nil)
		return err == nil, ""
	})
	cr := map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": map[string]any{"name": "my-crontab"},
		"spec": map[string]any{"replicas": 1, "cronSpec": "* * * * */5"}}
	if err := e.c.Do(ctx, "POST", crPath, cr, &cr); err != nil {
		t.Fatal(err)
	}
	cr["status"] = map[string]any{"replicas": 1, "labelSelector": "app=web"}
	if err := e.c.Do(ctx, "PUT", crPath+"/my-crontab/status", cr, nil); err != nil {
		t.Fatal(err)
	}
	e.runningPod("my-crontab-0")
	e.createHPA("my-crontab", autoscalingv2.CrossVersionObjectReference{APIVersion: "stable.example.com/v1", Kind: "CronTab", Name: "my-crontab"}, cpuUtilization(50), nil)

	e.load.set(400) // 200% of the request, four times the target
	hpa := e.syncAfter(DefaultSyncPeriod, "my-crontab", 1)
	var got map[string]any
	if err := e.c.Do(ctx, "GET", crPath+"/my-crontab", nil, &got); err != nil {
		t.Fatal(err)
	}
	if replicas := got["spec"].(map[string]any)["replicas"]; replicas != float64(4) {
		t.Fatalf("the CronTab's spec.replicas is %v, want 4", replicas)
	}
	if got["spec"].(map[string]any)["cronSpec"] != "* * * * */5" || got["status"].(map[string]any)["replicas"] != float64(1) {
		t.Errorf("the CronTab after the rescale: %v, want its cronSpec and status untouched", got)
	}
	if requests.count("GET") < 1 || requests.count("PUT") != 1 {
		t.Errorf("the scale subresource was asked %d GETs and %d PUTs, want GETs and one PUT", requests.count("GET"), requests.count("PUT"))
	}
	wantConditions(t, hpa, "AbleToScale=True/SucceededRescale", "ScalingActive=True/ValidMetricFound")
	e.wantEvent("my-crontab", ReasonSuccessfulRescale, "New size: 4; reason: cpu resource utilization (percentage of request) above target")
}
