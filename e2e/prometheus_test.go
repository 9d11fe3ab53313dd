package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// prometheusBinary is where Debian's prometheus package installs the
// server (.ci/run installs the package).
const prometheusBinary = "/usr/bin/prometheus"

// TestPrometheusScrapesEveryComponent runs the real Prometheus with the
// shipped addons/prometheus/prometheus.yml against a cluster started as
// `make local` starts one (the secure port, each component on its own
// kubeconfig, nodes node01..node03), set up as hack/run-prometheus.sh
// sets it up: addons/prometheus/rbac.yaml applied, a token of
// monitoring/prometheus, the CA from the ConfigMap kube-root-ca.crt.
// Only the ports (the test cluster's are free ones), the files' directory
// and the scrape interval (1s, not 15s) differ from the shipped file; its
// jobs and paths are the shipped ones, so a drift there fails here. Then
// Prometheus reloads with prometheus-compose.yml (`make up`'s), whose
// job `containerd` finds three runtimes started as docker compose starts
// them, with --metrics-address.
func TestPrometheusScrapesEveryComponent(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(prometheusBinary); err != nil {
		t.Skipf("%s is missing (apt-get install prometheus; .ci/run installs it): %v", prometheusBinary, err)
	}
	nodes := []string{"node01", "node02", "node03"}
	var kubelets []kubeletNode
	for _, n := range nodes {
		kubelets = append(kubelets, kubeletNode{name: n})
	}
	audit := filepath.Join(t.TempDir(), "audit.log")
	c := startClusterWith(t, clusterFlags{secure: true, apiserver: []string{"--audit-log-path", audit}}, kubelets...)
	k := newKubectl(t, c)

	// hack/run-prometheus.sh's steps.
	files := t.TempDir()
	k.mustKubectl(t, "apply", "-f", "../addons/prometheus/rbac.yaml")
	token := k.mustKubectl(t, "-n", "monitoring", "create", "token", "prometheus", "--duration", "24h")
	writeFile(t, filepath.Join(files, "token"), token)
	var ca string
	testserver.EventuallyWithin(t, 30*time.Second, "the ConfigMap monitoring/kube-root-ca.crt holds the CA", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "-n", "monitoring", "get", "configmap", "kube-root-ca.crt", "-o", `jsonpath={.data.ca\.crt}`)
		ca = out
		return strings.Contains(out, "BEGIN CERTIFICATE"), errOut
	})
	writeFile(t, filepath.Join(files, "ca.crt"), ca)

	replacements := [][2]string{
		{"127.0.0.1:6443", fmt.Sprintf("127.0.0.1:%d", c.securePort)},
		{"127.0.0.1:10259", fmt.Sprintf("127.0.0.1:%d", c.componentPorts["scheduler"])},
		{"127.0.0.1:10257", fmt.Sprintf("127.0.0.1:%d", c.componentPorts["controller-manager"])},
		{"../../mkube-data/prometheus/", files + "/"},
		{"scrape_interval: 15s", "scrape_interval: 1s"},
	}
	configPath := filepath.Join(files, "prometheus.yml")
	writeFile(t, configPath, renderPrometheusConfig(t, "prometheus.yml", replacements))
	promtoolCheckConfig(t, configPath)

	prom := startPrometheus(t, configPath)
	// Each job's targets, by job and, for the kubelets, node and path.
	want := []string{"apiserver", "kube-controller-manager", "kube-scheduler"}
	for _, path := range []string{"/metrics", "/metrics/cadvisor", "/metrics/probes", "/metrics/resource"} {
		for _, n := range nodes {
			want = append(want, "kubelet "+n+" "+path)
		}
	}
	began := time.Now()
	targets := prom.waitAllUp(t, want)
	t.Logf("%d targets up %v after Prometheus started", len(targets), time.Since(began).Round(time.Millisecond))
	// The kubelets are reached through the API server's node proxy.
	cadvisor := fmt.Sprintf("https://127.0.0.1:%d/api/v1/nodes/node02/proxy/metrics/cadvisor", c.securePort)
	if !slices.ContainsFunc(targets, func(tg promTarget) bool { return tg.ScrapeURL == cadvisor }) {
		t.Errorf("no target scrapes %s", cadvisor)
	}

	// A rate needs two samples in its window: a second scrape.
	testserver.EventuallyWithin(t, 60*time.Second, "rate(apiserver_request_total[1m]) answers", func() (bool, string) {
		res, err := prom.query("rate(apiserver_request_total[1m])")
		return err == nil && len(res) > 0, fmt.Sprint(res, err)
	})
	// Each node's own series, labelled with its node.
	testserver.EventuallyWithin(t, 30*time.Second, "node_memory_working_set_bytes for each node", func() (bool, string) {
		res, err := prom.query("node_memory_working_set_bytes")
		var got []string
		for _, s := range res {
			got = append(got, s.Metric["node"])
		}
		slices.Sort(got)
		return err == nil && slices.Equal(got, nodes), fmt.Sprint(got, err)
	})
	for _, q := range []string{"sum by (job) (up)", `topk(3, sum by (verb, resource) (rate(apiserver_request_total[1m])))`} {
		res, err := prom.query(q)
		if err != nil {
			t.Fatal(err)
		}
		// As the graph page's table shows it, for docs/observing.md.
		var lines []string
		for _, s := range res {
			var labels []string
			for name, value := range s.Metric {
				labels = append(labels, fmt.Sprintf("%s=%q", name, value))
			}
			slices.Sort(labels)
			lines = append(lines, fmt.Sprintf("{%s} %v", strings.Join(labels, ", "), s.Value[1]))
		}
		slices.Sort(lines)
		t.Logf("%s:\n%s", q, strings.Join(lines, "\n"))
	}

	// make up's configuration: the same jobs, word for word, and the
	// runtimes' (docker compose publishes them on 13381..13383).
	local, compose := readShipped(t, "prometheus.yml"), readShipped(t, "prometheus-compose.yml")
	if !strings.Contains(compose, local[strings.Index(local, "global:"):]) {
		t.Errorf("prometheus-compose.yml does not hold prometheus.yml's configuration word for word")
	}
	for i, n := range nodes {
		port := freePort(t)
		socket := "unix://" + filepath.Join(files, n+".sock")
		c.startAs("runtime-"+n, "runtime", "--listen", socket, "--metrics-address", fmt.Sprintf("127.0.0.1:%d", port),
			"--node-root", filepath.Join(files, "runtime-nodes"))
		replacements = append(replacements, [2]string{fmt.Sprintf("127.0.0.1:%d", 13381+i), fmt.Sprintf("127.0.0.1:%d", port)})
		want = append(want, "containerd "+n)
		criVersion(t, socket) // a call for its metrics to count
	}
	writeFile(t, configPath, renderPrometheusConfig(t, "prometheus-compose.yml", replacements))
	promtoolCheckConfig(t, configPath)
	prom.reload(t)
	prom.waitAllUp(t, want)
	testserver.EventuallyWithin(t, 30*time.Second, "each runtime's CRI Version call", func() (bool, string) {
		res, err := prom.query(`grpc_server_handled_total{job="containerd",grpc_service="runtime.v1.RuntimeService",grpc_method="Version",grpc_code="OK"} > 0`)
		return err == nil && len(res) == len(nodes), fmt.Sprint(res, err)
	})
}

// criVersion calls CRI's Version on the runtime at endpoint, as
// `crictl version` does, once it answers.
func criVersion(t *testing.T, endpoint string) {
	t.Helper()
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := runtimeapi.NewRuntimeServiceClient(conn)
	testserver.EventuallyWithin(t, 30*time.Second, "the runtime at "+endpoint+" answers Version", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := client.Version(ctx, &runtimeapi.VersionRequest{})
		return err == nil, fmt.Sprint(err)
	})
}

// waitAllUp waits until Prometheus has every target of want (promTarget's
// keys) and every target it has is up, and returns them.
func (p *prometheus) waitAllUp(t *testing.T, want []string) []promTarget {
	t.Helper()
	var targets []promTarget
	testserver.EventuallyWithin(t, 90*time.Second, "every target of the shipped configuration is up", func() (bool, string) {
		var err error
		if targets, err = p.targets(); err != nil {
			return false, err.Error()
		}
		var problems []string
		have := map[string]bool{}
		for _, tg := range targets {
			have[tg.key()] = true
			if tg.Health != "up" {
				problems = append(problems, fmt.Sprintf("%s %s: health %q, lastError %q", tg.key(), tg.ScrapeURL, tg.Health, tg.LastError))
			}
		}
		for _, w := range want {
			if !have[w] {
				problems = append(problems, "no target "+w)
			}
		}
		return len(problems) == 0, strings.Join(problems, "\n")
	})
	return targets
}

// promtoolCheckConfig checks a configuration file as a learner would,
// when promtool is installed; it also checks the files it names exist.
func promtoolCheckConfig(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("promtool"); err != nil {
		return
	}
	if out, err := exec.Command("promtool", "check", "config", path).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}

// renderPrometheusConfig is the shipped addons/prometheus/NAME with each
// pair's first string replaced by its second; a string the file no
// longer has fails the test.
func renderPrometheusConfig(t *testing.T, name string, replacements [][2]string) string {
	t.Helper()
	config := readShipped(t, name)
	for _, r := range replacements {
		if !strings.Contains(config, r[0]) {
			t.Fatalf("addons/prometheus/%s has no %q", name, r[0])
		}
		config = strings.ReplaceAll(config, r[0], r[1])
	}
	return config
}

func readShipped(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "addons", "prometheus", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// prometheus is a running Prometheus server and its HTTP API.
type prometheus struct {
	url string
	cmd *exec.Cmd
}

// reload makes Prometheus read its configuration file again (SIGHUP),
// and waits until it has.
func (p *prometheus) reload(t *testing.T) {
	t.Helper()
	var before struct {
		Data struct {
			ReloadConfigSuccess bool   `json:"reloadConfigSuccess"`
			LastConfigTime      string `json:"lastConfigTime"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/status/runtimeinfo", &before); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testserver.EventuallyWithin(t, 30*time.Second, "Prometheus reloaded its configuration", func() (bool, string) {
		after := before
		err := p.get("/api/v1/status/runtimeinfo", &after)
		return err == nil && after.Data.LastConfigTime != before.Data.LastConfigTime && after.Data.ReloadConfigSuccess,
			fmt.Sprint(after.Data, err)
	})
}

// startPrometheus runs the real Prometheus with the configuration file on
// a free port, its data in a temporary directory, until the test ends;
// a failed test shows the end of its log.
func startPrometheus(t *testing.T, configPath string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(prometheusBinary, "--config.file", configPath, "--storage.tsdb.path", filepath.Join(dir, "data"),
		"--web.listen-address", addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logFile.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			lines := strings.Split(string(data), "\n")
			t.Logf("---- prometheus (last lines) ----\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	return &prometheus{url: "http://" + addr, cmd: cmd}
}

// promTarget is one active target of /api/v1/targets.
type promTarget struct {
	Labels    map[string]string `json:"labels"`
	ScrapeURL string            `json:"scrapeUrl"`
	LastError string            `json:"lastError"`
	Health    string            `json:"health"`
}

// key names the target by its job and, for a node's, node (and path).
func (tg promTarget) key() string {
	switch tg.Labels["job"] {
	case "kubelet":
		return "kubelet " + tg.Labels["node"] + " " + tg.Labels["metrics_path"]
	case "containerd":
		return "containerd " + tg.Labels["node"]
	}
	return tg.Labels["job"]
}

// promSample is one series of an instant vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (p *prometheus) targets() ([]promTarget, error) {
	var body struct {
		Data struct {
			ActiveTargets []promTarget `json:"activeTargets"`
		} `json:"data"`
	}
	err := p.get("/api/v1/targets?state=active", &body)
	return body.Data.ActiveTargets, err
}

// query evaluates an instant query and returns its vector.
func (p *prometheus) query(q string) ([]promSample, error) {
	var body struct {
		Data struct {
			ResultType string       `json:"resultType"`
			Result     []promSample `json:"result"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/query?query="+url.QueryEscape(q), &body); err != nil {
		return nil, err
	}
	if body.Data.ResultType != "vector" {
		return nil, fmt.Errorf("%s: result type %q, want vector", q, body.Data.ResultType)
	}
	return body.Data.Result, nil
}

func (p *prometheus) get(path string, out any) error {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(p.url + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
