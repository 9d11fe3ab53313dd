package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/mkube/mkube/internal/testserver"
)

// TestKubeletStatsAndMetricsThroughNodeProxy: a kubelet's
// /metrics/resource, /stats/summary, /metrics/cadvisor, /metrics/probes
// and /metrics, read as a learner reads them on Kubernetes, through the
// API server's node proxy (`kubectl get --raw
// /api/v1/nodes/NODE/proxy/metrics/resource`). The kubelet runs two nodes
// on one port (--nodes 2): each node's endpoints report that node only.
func TestKubeletStatsAndMetricsThroughNodeProxy(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "fake", flags: []string{"--nodes", "2"}})
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "web.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  nodeName: fake-2
  containers:
  - name: app
    image: nginx:1.25
    resources:
      limits: {cpu: 500m, memory: 64Mi}
    readinessProbe:
      httpGet: {path: /, port: 80}
      periodSeconds: 1
`))
	testserver.EventuallyWithin(t, 60*time.Second, "pod web Ready on fake-2", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "web", "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}")
		return out == "True", out
	})
	raw := func(node, path string) string {
		return k.mustKubectl(t, "get", "--raw", "/api/v1/nodes/"+node+"/proxy"+path)
	}

	// /metrics/resource: what metrics-server parses, the pod on fake-2 only.
	var families map[string]*dto.MetricFamily
	testserver.EventuallyWithin(t, 30*time.Second, "fake-2's /metrics/resource has pod web's container", func() (bool, string) {
		body := raw("fake-2", "/metrics/resource")
		families = parseMetrics(t, body)
		return findMetric(families["container_cpu_usage_seconds_total"], map[string]string{"container": "app", "pod": "web", "namespace": "default"}) != nil, body
	})
	for _, name := range []string{"node_cpu_usage_seconds_total", "node_memory_working_set_bytes"} {
		m := findMetric(families[name], nil)
		if m == nil || metricValue(m) <= 0 || m.GetTimestampMs() == 0 {
			t.Errorf("%s = %v, want a positive value with a timestamp", name, m)
		}
	}
	for _, name := range []string{"container_memory_working_set_bytes", "container_start_time_seconds"} {
		if findMetric(families[name], map[string]string{"container": "app", "pod": "web", "namespace": "default"}) == nil {
			t.Errorf("no %s for web/app", name)
		}
	}
	if findMetric(families["pod_cpu_usage_seconds_total"], map[string]string{"pod": "web", "namespace": "default"}) == nil {
		t.Error("no pod_cpu_usage_seconds_total for web")
	}
	if m := findMetric(families["scrape_error"], nil); m == nil || metricValue(m) != 0 {
		t.Errorf("scrape_error = %v, want 0", m)
	}
	t.Logf("fake-2's /metrics/resource:\n%s", raw("fake-2", "/metrics/resource"))
	if other := raw("fake-1", "/metrics/resource"); strings.Contains(other, `pod="web"`) {
		t.Errorf("fake-1's /metrics/resource reports fake-2's pod:\n%s", other)
	}
	// The per-node path the nodes annotate for metrics-server, reachable too.
	if ann := k.mustKubectl(t, "get", "node", "fake-2", "-o", `jsonpath={.metadata.annotations.metrics\.k8s\.io/resource-metrics-path}`); ann != "/nodes/fake-2/metrics/resource" {
		t.Errorf("fake-2's resource-metrics-path annotation %q", ann)
	}
	if body := raw("fake-1", "/nodes/fake-2/metrics/resource"); !strings.Contains(body, `pod="web"`) {
		t.Errorf("/nodes/fake-2/metrics/resource has no pod web:\n%s", body)
	}

	// /stats/summary: the Summary API.
	var summary statsapi.Summary
	if err := json.Unmarshal([]byte(raw("fake-2", "/stats/summary")), &summary); err != nil {
		t.Fatal(err)
	}
	if summary.Node.NodeName != "fake-2" || summary.Node.CPU == nil || summary.Node.Memory == nil || summary.Node.Fs == nil {
		t.Errorf("summary node %+v", summary.Node)
	}
	var found bool
	for _, p := range summary.Pods {
		if p.PodRef.Name == "web" && len(p.Containers) == 1 && p.Containers[0].Name == "app" && p.Containers[0].CPU.UsageCoreNanoSeconds != nil &&
			p.Containers[0].Memory.WorkingSetBytes != nil && p.EphemeralStorage != nil {
			found = true
		}
	}
	if !found {
		t.Errorf("summary has no pod web with container app: %+v", summary.Pods)
	}

	// /metrics/cadvisor, /metrics/probes and /metrics.
	cadvisor := parseMetrics(t, raw("fake-2", "/metrics/cadvisor"))
	if m := findMetric(cadvisor["container_spec_cpu_quota"], map[string]string{"container": "app", "pod": "web"}); m == nil || metricValue(m) != 50000 {
		t.Errorf("container_spec_cpu_quota = %v, want 50000", m)
	}
	if m := findMetric(cadvisor["machine_cpu_cores"], nil); m == nil || metricValue(m) != 4 {
		t.Errorf("machine_cpu_cores = %v, want 4", m)
	}
	testserver.EventuallyWithin(t, 30*time.Second, "web's readiness probes counted", func() (bool, string) {
		body := raw("fake-2", "/metrics/probes")
		m := findMetric(parseMetrics(t, body)["prober_probe_total"], map[string]string{"probe_type": "Readiness", "result": "successful", "pod": "web", "container": "app"})
		return m != nil && metricValue(m) >= 1, body
	})
	own := parseMetrics(t, raw("fake-2", "/metrics"))
	if findMetric(own["kubelet_node_name"], map[string]string{"node": "fake-2"}) == nil || own["kubelet_pod_start_sli_duration_seconds"] == nil ||
		own["kubelet_runtime_operations_total"] == nil || own["go_goroutines"] == nil {
		t.Errorf("fake-2's /metrics lacks kubelet_node_name{node=fake-2}, the pod start SLI, runtime operations or go_*")
	}
	if m := findMetric(own["kubelet_running_pods"], nil); m == nil || metricValue(m) != 1 {
		t.Errorf("kubelet_running_pods = %v, want 1", m)
	}
	// web's pull of nginx:1.25 (the in-process runtime's 300 ms) is in
	// the total and not in the SLI.
	sli, total := findMetric(own["kubelet_pod_start_sli_duration_seconds"], nil), findMetric(own["kubelet_pod_start_total_duration_seconds"], nil)
	if sli == nil || total == nil || total.GetHistogram().GetSampleCount() != 1 ||
		total.GetHistogram().GetSampleSum()-sli.GetHistogram().GetSampleSum() < 0.3 {
		t.Errorf("pod start: SLI %v, total %v; want one pod, the total at least the 300 ms pull more", sli, total)
	}
}

// parseMetrics parses a Prometheus text exposition, checked by promtool
// when it is installed.
func parseMetrics(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	if path, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(path, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse metrics: %v\n%s", err, body)
	}
	return families
}

// findMetric is the family's first metric with all of labels.
func findMetric(f *dto.MetricFamily, labels map[string]string) *dto.Metric {
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if match {
			return m
		}
	}
	return nil
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return 0
}
