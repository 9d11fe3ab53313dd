package apiserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape GETs path from the test server and parses the exposition.
func scrape(t *testing.T, s *testServer, path string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("GET %s: not the Prometheus text format: %v", path, err)
	}
	return families
}

// hasSeries reports whether family holds a series with all of want's labels.
func hasSeries(f *dto.MetricFamily, want map[string]string) bool {
	if f == nil {
		return false
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && got[k] == v
		}
		if match {
			return true
		}
	}
	return false
}

func TestMetricsEndpointHasKubeAPIServerSeries(t *testing.T) {
	s := newTestServer(t)
	s.createPod("web-1", "web")
	s.podCount()
	s.Do("GET", "/api/v1/namespaces/default/pods/web-1", "", "", nil)
	s.Do("GET", "/healthz", "", "", nil)
	families := scrape(t, s, "/metrics")

	tests := []struct {
		family string
		labels map[string]string
	}{
		{"apiserver_request_total", map[string]string{"verb": "POST", "resource": "pods", "scope": "namespace", "code": "201", "component": "apiserver", "version": "v1", "group": "", "dry_run": ""}},
		{"apiserver_request_total", map[string]string{"verb": "LIST", "resource": "pods", "scope": "cluster", "code": "200"}},
		{"apiserver_request_total", map[string]string{"verb": "GET", "resource": "pods", "scope": "resource", "code": "200"}},
		{"apiserver_request_total", map[string]string{"verb": "GET", "resource": "", "code": "200"}}, // /healthz
		{"apiserver_request_duration_seconds", map[string]string{"verb": "POST", "resource": "pods", "scope": "namespace"}},
		{"apiserver_current_inflight_requests", map[string]string{"request_kind": "readOnly"}},
		{"apiserver_current_inflight_requests", map[string]string{"request_kind": "mutating"}},
		{"apiserver_storage_objects", map[string]string{"resource": "pods"}},
		{"apiserver_storage_objects", map[string]string{"resource": "deployments.apps"}},
		{"etcd_request_duration_seconds", map[string]string{"operation": "create", "type": "pods"}},
		{"mkube_pod_step_duration_seconds", map[string]string{"step": "3"}},
		{"go_goroutines", nil},
		{"process_resident_memory_bytes", nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.family, tt.labels), func(t *testing.T) {
			if !hasSeries(families[tt.family], tt.labels) {
				t.Errorf("no %s series with %v", tt.family, tt.labels)
			}
		})
	}
	if f := families["apiserver_request_duration_seconds"]; f != nil {
		if n := len(f.Metric[0].GetHistogram().Bucket); n != 23+1 { // and +Inf
			t.Errorf("apiserver_request_duration_seconds has %d buckets, kube-apiserver has 23", n)
		}
	}
	for _, m := range families["apiserver_storage_objects"].GetMetric() {
		if m.Label[0].GetValue() == "pods" && m.GetGauge().GetValue() != 1 {
			t.Errorf("apiserver_storage_objects{resource=pods} = %v, want 1", m.GetGauge().GetValue())
		}
	}
}

func TestMetricsSLIsRecordHealthChecks(t *testing.T) {
	s := newTestServer(t)
	s.Do("GET", "/readyz", "", "", nil)
	families := scrape(t, s, "/metrics/slis")
	for _, want := range []struct {
		family string
		labels map[string]string
	}{
		{"kubernetes_healthcheck", map[string]string{"name": "etcd", "type": "readyz"}},
		{"kubernetes_healthchecks_total", map[string]string{"name": "etcd", "type": "readyz", "status": "success"}},
	} {
		if !hasSeries(families[want.family], want.labels) {
			t.Errorf("no %s series with %v", want.family, want.labels)
		}
	}
	if _, ok := families["apiserver_request_total"]; ok {
		t.Error("/metrics/slis serves its own registry, not /metrics'")
	}
}
