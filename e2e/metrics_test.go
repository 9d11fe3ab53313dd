package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// TestComponentsServeMetrics reads /metrics as a learner and Prometheus
// would: the API server's through kubectl (RBAC's nonResourceURLs decide
// who may), the scheduler's and the controller manager's on their own
// HTTPS ports (--secure-port), where /healthz is open and /metrics needs
// a client certificate or a token the API server vouches for. Each body
// passes `promtool check metrics` when promtool is installed.
func TestComponentsServeMetrics(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, clusterFlags{secure: true}, kubeletNode{name: "node01"})
	k := newKubectl(t, c)
	k.mustKubectl(t, "run", "web", "--image", "nginx:1.25")
	testserver.EventuallyWithin(t, 60*time.Second, "pod web is bound", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "web", "-o", "jsonpath={.spec.nodeName}")
		return out == "node01", out
	})

	apiserver := k.mustKubectl(t, "get", "--raw", "/metrics")
	for _, want := range []string{
		`apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1"}`,
		`apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1",le="0.005"}`,
		`apiserver_current_inflight_requests{request_kind="readOnly"}`,
		`apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"}`,
		`apiserver_storage_objects{resource="pods"} 1`,
		`etcd_request_duration_seconds_bucket{operation="create",type="pods",le="0.005"}`,
		`apiserver_watch_events_total{group="",kind="Pod",version="v1"}`,
		`mkube_pod_step_duration_seconds_bucket{step="3",le="0.005"}`,
		"process_cpu_seconds_total",
	} {
		if !strings.Contains(apiserver, want) {
			t.Errorf("the API server's /metrics lacks %s", want)
		}
	}
	promtoolCheck(t, "apiserver", apiserver)
	slis := k.mustKubectl(t, "get", "--raw", "/metrics/slis")
	if !strings.Contains(slis, "kubernetes_healthchecks_total") {
		t.Errorf("/metrics/slis lacks kubernetes_healthchecks_total:\n%s", slis)
	}
	// RBAC: a user without a role is refused, one in system:monitoring may.
	if out := k.mustFail(t, "get", "--raw", "/metrics", "--as", "jane"); !strings.Contains(out, `cannot get path "/metrics"`) {
		t.Errorf("jane reading /metrics: %s", out)
	}
	k.mustKubectl(t, "get", "--raw", "/metrics", "--as", "jane", "--as-group", "system:monitoring")

	admin, err := tls.LoadX509KeyPair(filepath.Join(c.certDir(), "admin.crt"), filepath.Join(c.certDir(), "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	// The ports' certificates are self-signed, made at start: nothing to
	// verify them against, as `curl -k` (Prometheus: insecure_skip_verify).
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	withCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{admin}}}}

	scheduler := fmt.Sprintf("https://127.0.0.1:%d", c.componentPorts["scheduler"])
	if code, body := get(t, insecure, scheduler+"/healthz", ""); code != 200 || body != "ok" {
		t.Errorf("scheduler /healthz: %d %q", code, body)
	}
	if code, body := get(t, insecure, scheduler+"/readyz?verbose", ""); code != 200 || !strings.Contains(body, "[+]sched-handler-sync ok") {
		t.Errorf("scheduler /readyz?verbose: %d %q", code, body)
	}
	if code, _ := get(t, insecure, scheduler+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("scheduler /metrics without credentials: %d, want 401", code)
	}
	code, body := get(t, withCert, scheduler+"/metrics", "")
	if code != 200 {
		t.Fatalf("scheduler /metrics with the admin's certificate: %d %s", code, body)
	}
	for _, want := range []string{
		`scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1`,
		`scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="scheduled"} 1`,
		`scheduler_pending_pods{queue="active"} 0`,
		`scheduler_pending_pods{queue="gated"} 0`,
		`scheduler_pod_scheduling_attempts_count 1`,
		`scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",profile="default-scheduler",status="Success"} 1`,
		`rest_client_requests_total{code="201",host=`,
		`mkube_pod_step_duration_seconds_count{step="9"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the scheduler's /metrics lacks %s", want)
		}
	}
	promtoolCheck(t, "scheduler", body)

	// The controller manager's, with a service account's token (TokenReview)
	// that RBAC lets read /metrics (SubjectAccessReview).
	k.mustKubectl(t, "create", "serviceaccount", "prometheus")
	k.mustKubectl(t, "create", "clusterrolebinding", "prometheus-monitoring", "--clusterrole", "system:monitoring", "--serviceaccount", "default:prometheus")
	token := strings.TrimSpace(k.mustKubectl(t, "create", "token", "prometheus"))
	cm := fmt.Sprintf("https://127.0.0.1:%d", c.componentPorts["controller-manager"])
	if code, body := get(t, insecure, cm+"/metrics", "not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("controller manager /metrics with a bad token: %d %s", code, body)
	}
	var cmBody string
	testserver.EventuallyWithin(t, 30*time.Second, "the controller manager's queues are scraped", func() (bool, string) {
		code, cmBody = get(t, insecure, cm+"/metrics", token)
		return code == 200 && strings.Contains(cmBody, `workqueue_adds_total{name="replicaset"}`), fmt.Sprint(code, " ", cmBody)
	})
	for _, want := range []string{`workqueue_depth{name="deployment"}`, `workqueue_work_duration_seconds_bucket{name="serviceaccount"`,
		`workqueue_longest_running_processor_seconds{name="namespace"}`, `rest_client_request_duration_seconds_bucket{host=`} {
		if !strings.Contains(cmBody, want) {
			t.Errorf("the controller manager's /metrics lacks %s", want)
		}
	}
	promtoolCheck(t, "controller-manager", cmBody)
}

// get GETs url, with a bearer token if given.
func get(t *testing.T, client *http.Client, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// promtoolCheck lints an exposition with Prometheus' own `promtool check
// metrics` (Debian's prometheus package; .ci/run installs it).
func promtoolCheck(t *testing.T, component, body string) {
	t.Helper()
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Logf("promtool is not on PATH (apt-get install prometheus): %s's /metrics not linted", component)
		return
	}
	series := 0
	for _, line := range strings.Split(body, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			series++
		}
	}
	t.Logf("%s's /metrics: %d bytes, %d samples", component, len(body), series)
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		path := filepath.Join(t.TempDir(), component+".metrics")
		os.WriteFile(path, []byte(body), 0o644)
		t.Errorf("promtool check metrics on %s's /metrics: %v\n%s", component, err, out)
	}
}
