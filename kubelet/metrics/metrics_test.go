package metrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mkube/mkube/kubelet/stats"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) // 1767323045 s, 1767323045000 ms

type fixedSnapshot struct {
	snap *stats.Snapshot
	err  error
}

func (f fixedSnapshot) Snapshot(context.Context) (*stats.Snapshot, error) { return f.snap, f.err }

// webSnapshot is a node with one pod, default/web: container app, with
// a 500m limit, busy; sampled at t0.
func webSnapshot() *stats.Snapshot {
	cpu := stats.CPU{Time: t0, UsageCoreNanoSeconds: 6_500_000_000, UsageNanoCores: 500_000_000}
	mem := stats.Memory{Time: t0, WorkingSetBytes: 12 << 20, UsageBytes: 13 << 20, RSSBytes: 6 << 20}
	return &stats.Snapshot{Time: t0,
		Node: stats.NodeUsage{Name: "node01", CPU: stats.CPU{Time: t0, UsageCoreNanoSeconds: 7_500_000_000},
			Memory: stats.Memory{Time: t0, WorkingSetBytes: 76 << 20}, Cores: 4, MemoryBytes: 8 << 30},
		Pods: []stats.PodUsage{{Name: "web", Namespace: "default", UID: "uid-1", QOSClass: "Burstable",
			StartTime: t0.Add(-time.Minute), CPU: cpu, Memory: mem,
			Containers: []stats.ContainerUsage{{Name: "app", ID: "c-app", Image: "nginx:1.27", StartTime: t0.Add(-50 * time.Second),
				CPU: cpu, Memory: mem, CPUQuota: 50_000, CPUPeriod: 100_000, MemoryLimitBytes: 64 << 20,
				Throttling: stats.Throttling{Periods: 100, ThrottledPeriods: 90, ThrottledSeconds: 4.5}}}}}}
}

// scrape serves reg as the kubelet does and returns the body, checked
// by promtool when it is installed.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body := w.Body.String()
	if path, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(path, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	return body
}

func wantLines(t *testing.T, body string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(body, "\n"+l+"\n") {
			t.Errorf("missing line %q in:\n%s", l, body)
		}
	}
}

func TestResourceCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(ResourceCollector{Source: fixedSnapshot{snap: webSnapshot()}})
	wantLines(t, scrape(t, reg),
		"# TYPE node_cpu_usage_seconds_total counter",
		"node_cpu_usage_seconds_total 7.5 1767323045000",
		"node_memory_working_set_bytes 7.9691776e+07 1767323045000",
		`container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 6.5 1767323045000`,
		`container_memory_working_set_bytes{container="app",namespace="default",pod="web"} 1.2582912e+07 1767323045000`,
		`container_start_time_seconds{container="app",namespace="default",pod="web"} 1.767322995e+09 1767322995000`,
		`pod_cpu_usage_seconds_total{namespace="default",pod="web"} 6.5 1767323045000`,
		`pod_memory_working_set_bytes{namespace="default",pod="web"} 1.2582912e+07 1767323045000`,
		"scrape_error 0",
		"resource_scrape_error 0",
	)
}

func TestResourceCollectorScrapeError(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(ResourceCollector{Source: fixedSnapshot{err: errors.New("runtime down")}})
	body := scrape(t, reg)
	wantLines(t, body, "scrape_error 1", "resource_scrape_error 1")
	if strings.Contains(body, "node_cpu_usage_seconds_total ") {
		t.Errorf("a failed scrape reported usage:\n%s", body)
	}
}

func TestCadvisorCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(CadvisorCollector{Source: fixedSnapshot{snap: webSnapshot()}, MachineID: "m1"})
	labels := `{container="app",id="/kubepods/burstable/poduid-1/c-app",image="nginx:1.27",name="c-app",namespace="default",pod="web"}`
	wantLines(t, scrape(t, reg),
		`machine_cpu_cores{boot_id="",machine_id="m1",system_uuid="m1"} 4`,
		`machine_memory_bytes{boot_id="",machine_id="m1",system_uuid="m1"} 8.589934592e+09`,
		"container_cpu_usage_seconds_total"+labels+" 6.5 1767323045000",
		"container_cpu_cfs_periods_total"+labels+" 100 1767323045000",
		"container_cpu_cfs_throttled_periods_total"+labels+" 90 1767323045000",
		"container_cpu_cfs_throttled_seconds_total"+labels+" 4.5 1767323045000",
		"container_memory_working_set_bytes"+labels+" 1.2582912e+07 1767323045000",
		"container_memory_rss"+labels+" 6.291456e+06 1767323045000",
		"container_spec_cpu_quota"+labels+" 50000",
		"container_spec_cpu_period"+labels+" 100000",
		"container_spec_memory_limit_bytes"+labels+" 6.7108864e+07",
		"container_start_time_seconds"+labels+" 1.767322995e+09",
		// The pod's own cgroup.
		`container_cpu_usage_seconds_total{container="",id="/kubepods/burstable/poduid-1",image="",name="",namespace="default",pod="web"} 6.5 1767323045000`,
	)
}

func TestPodCgroupPath(t *testing.T) {
	for qos, want := range map[string]string{"Guaranteed": "/kubepods/podu", "Burstable": "/kubepods/burstable/podu",
		"BestEffort": "/kubepods/besteffort/podu", "": "/kubepods/besteffort/podu"} {
		if got := podCgroupPath(stats.PodUsage{UID: "u", QOSClass: qos}); got != want {
			t.Errorf("%q: %s, want %s", qos, got, want)
		}
	}
}

func TestOperationType(t *testing.T) {
	for method, want := range map[string]string{"/runtime.v1.RuntimeService/ListContainers": "list_containers",
		"/runtime.v1.RuntimeService/Version": "version", "/runtime.v1.ImageService/PullImage": "pull_image"} {
		if got := operationType(method); got != want {
			t.Errorf("%s: %q, want %q", method, got, want)
		}
	}
}

// get reads path from h.
func get(t *testing.T, h http.Handler) string {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	b, _ := io.ReadAll(w.Body)
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, b)
	}
	return string(bytes.TrimSpace(b))
}
