package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/client"
)

// serve answers each path (with its query) with a body; others are 404.
func serve(t *testing.T, bodies map[string]string) *REST {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.RequestURI()]
		if !ok {
			t.Logf("not served: %s", r.URL.RequestURI())
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	resourceOf := func(_ context.Context, apiVersion, kind string) (string, error) {
		return strings.ToLower(kind) + "s", nil
	}
	return NewREST(client.New(srv.URL, "metrics-test"), resourceOf)
}

const podMetrics = `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","items":[
 {"metadata":{"name":"web-0","namespace":"default"},"timestamp":"2026-01-01T12:00:00Z","window":"15s",
  "containers":[{"name":"app","usage":{"cpu":"250m","memory":"64Mi"}},{"name":"sidecar","usage":{"cpu":"50m","memory":"16Mi"}}]},
 {"metadata":{"name":"web-1","namespace":"default"},"timestamp":"2026-01-01T12:00:00Z","window":"15s",
  "containers":[{"name":"app","usage":{"memory":"64Mi"}},{"name":"sidecar","usage":{"cpu":"50m"}}]}]}`

func TestResourceMetricsArePodMetricsSummedOverContainers(t *testing.T) {
	r := serve(t, map[string]string{"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb": podMetrics})
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	got, _, err := r.GetResourceMetric(context.Background(), corev1.ResourceCPU, "default", sel, "")
	if err != nil {
		t.Fatal(err)
	}
	// web-1's app container has no cpu sample: the pod counts as missing.
	if len(got) != 1 || got["web-0"].Value != 300 || got["web-0"].Window.Seconds() != 15 {
		t.Errorf("pod cpu = %+v, want web-0 at 300m over 15s only", got)
	}
	got, _, err = r.GetResourceMetric(context.Background(), corev1.ResourceCPU, "default", sel, "sidecar")
	if err != nil || len(got) != 2 || got["web-0"].Value != 50 || got["web-1"].Value != 50 {
		t.Errorf("sidecar cpu = %+v, %v; want 50m in each pod", got, err)
	}
	_, _, err = r.GetResourceMetric(context.Background(), corev1.ResourceCPU, "default", sel, "nginx")
	if err == nil || !strings.Contains(err.Error(), "failed to get container metrics: container nginx not present in metrics for pod default/web-0") {
		t.Errorf("a container not there: %v", err)
	}
	_, _, err = r.GetResourceMetric(context.Background(), corev1.ResourceCPU, "other", sel, "")
	if err == nil || !strings.HasPrefix(err.Error(), "unable to fetch metrics from resource metrics API: ") {
		t.Errorf("metrics.k8s.io not served: %v", err)
	}
}

func TestCustomAndExternalMetrics(t *testing.T) {
	r := serve(t, map[string]string{
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/packets-per-second?labelSelector=app%3Dweb": `{"items":[
			{"describedObject":{"kind":"Pod","name":"web-0"},"timestamp":"2026-01-01T12:00:00Z","windowSeconds":30,"value":"1500m"},
			{"describedObject":{"kind":"Pod","name":"web-1"},"timestamp":"2026-01-01T12:00:00Z","value":"2"}]}`,
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/ingresss/main-route/requests-per-second": `{"items":[
			{"describedObject":{"kind":"Ingress","name":"main-route"},"timestamp":"2026-01-01T12:00:00Z","value":"10k"}]}`,
		"/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready?labelSelector=queue%3Dworker_tasks": `{"items":[
			{"metricName":"queue_messages_ready","timestamp":"2026-01-01T12:00:00Z","value":"30"},{"metricName":"queue_messages_ready","timestamp":"2026-01-01T12:00:00Z","value":"12"}]}`,
	})
	ctx := context.Background()
	pods, _, err := r.GetRawMetric(ctx, "packets-per-second", "default", labels.SelectorFromSet(labels.Set{"app": "web"}), labels.Everything())
	if err != nil || pods["web-0"].Value != 1500 || pods["web-0"].Window.Seconds() != 30 || pods["web-1"].Value != 2000 || pods["web-1"].Window != defaultWindow {
		t.Errorf("pods metric = %+v, %v", pods, err)
	}
	ref := &autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main-route"}
	if v, _, err := r.GetObjectMetric(ctx, "requests-per-second", "default", ref, labels.Everything()); err != nil || v != 10_000_000 {
		t.Errorf("object metric = %d, %v; want 10k (10000000 milli)", v, err)
	}
	values, _, err := r.GetExternalMetric(ctx, "queue_messages_ready", "default", labels.SelectorFromSet(labels.Set{"queue": "worker_tasks"}))
	if err != nil || len(values) != 2 || values[0] != 30000 || values[1] != 12000 {
		t.Errorf("external metric = %v, %v", values, err)
	}
	if _, _, err := r.GetExternalMetric(ctx, "other", "default", labels.Everything()); err == nil || !strings.HasPrefix(err.Error(), "unable to fetch metrics from external metrics API: ") {
		t.Errorf("external metrics not served: %v", err)
	}
}
