package metricsserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/fakekubelet"
	"github.com/mkube/mkube/internal/logging"
	"github.com/mkube/mkube/internal/testserver"
)

// set is a reading of k at ms: the node's cumulative CPU seconds, 512 MiB,
// and each pod's one container "main", its CPU seconds and 64 MiB.
func set(k *fakekubelet.Kubelet, ms int64, nodeCPU float64, pods map[string]float64) {
	var containers []fakekubelet.Container
	for ref, cpu := range pods {
		ns, name, _ := strings.Cut(ref, "/")
		containers = append(containers, fakekubelet.Container{Namespace: ns, Pod: name, Name: "main", CPUSeconds: cpu, MemoryBytes: 64 << 20})
	}
	k.Set(time.UnixMilli(ms), nodeCPU, 512<<20, containers...)
}

// The server follows the API server's nodes and pods, scrapes each
// node's kubelet at its status address and port over HTTPS (a path of
// its annotation too), and answers metrics.k8s.io to those RBAC lets
// read it, asking the API server by SubjectAccessReview.
func TestTheServerScrapesTheNodesOfTheAPIServerAndServesMetrics(t *testing.T) {
	t.Parallel()
	ts := testserver.StartServer(t)
	api := client.New(ts.URL, "metrics-server-test")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	plain := fakekubelet.Start(t, "/metrics/resource")
	secure := fakekubelet.Start(t, "/metrics/nodes/node02/metrics/resource")
	zeros := fakekubelet.Start(t, "/metrics/resource")
	set(zeros, 1, 0, nil)
	for name, k := range map[string]*fakekubelet.Kubelet{"node01": plain, "node02": secure, "node03": zeros} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"disk": map[bool]string{true: "ssd", false: "hdd"}[name == "node01"]}}}
		if k == secure {
			node.Annotations = map[string]string{ResourceMetricsPathAnnotation: k.Path}
		}
		if err := api.Create(ctx, client.Nodes, "", node, node); err != nil {
			t.Fatal(err)
		}
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "unreachable.invalid"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
		node.Status.DaemonEndpoints.KubeletEndpoint.Port = k.Port()
		if err := api.UpdateStatus(ctx, client.Nodes, "", name, node, node); err != nil {
			t.Fatal(err)
		}
	}
	for _, ref := range []string{"default/web", "default/db", "kube-system/coredns"} {
		ns, name, _ := strings.Cut(ref, "/")
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx"}}}}
		if err := api.Create(ctx, client.Pods, ns, pod, pod); err != nil {
			t.Fatal(err)
		}
	}

	opts, err := ParseFlags([]string{"--kubelet-insecure-tls", "--kubelet-use-node-status-port", "--kubelet-preferred-address-types=InternalIP,Hostname", "--metric-resolution=15s"})
	if err != nil {
		t.Fatal(err)
	}
	kubelets, err := KubeletClient(&rest.Config{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	clock := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	srv, err := New(ctx, Config{Options: opts, API: api, Kubelets: kubelets, Clock: clock, Log: logging.New("metrics-server", "error")})
	if err != nil {
		t.Fatal(err)
	}
	if !srv.Start(ctx) {
		t.Fatal("informers did not sync")
	}
	get := func(path string) (int, string) {
		w := httptest.NewRecorder()
		srv.Handler(nil).ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w.Code, w.Body.String()
	}
	if code, body := get("/readyz"); code != http.StatusInternalServerError {
		t.Errorf("/readyz before the first scrape: %d %s", code, body)
	}

	set(plain, 1_700_000_000_000, 100, map[string]float64{"default/web": 10, "default/db": 1})
	set(secure, 1_700_000_000_000, 50, map[string]float64{"kube-system/coredns": 2})
	srv.ScrapeOnce(ctx)
	if code, body := get("/apis/metrics.k8s.io/v1beta1/nodes"); code != http.StatusForbidden ||
		!strings.Contains(body, `User \"system:anonymous\" cannot list resource \"nodes\" in API group \"metrics.k8s.io\" at the cluster scope`) {
		t.Errorf("anonymous list: %d %s", code, body)
	}
	for path, body := range map[string]string{
		"/apis/rbac.authorization.k8s.io/v1/clusterroles": `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"metrics-reader"},
			"rules":[{"apiGroups":["metrics.k8s.io"],"resources":["nodes","pods"],"verbs":["get","list"]}]}`,
		"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings": `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"metrics-reader"},
			"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"metrics-reader"},
			"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"system:anonymous"}]}`,
	} {
		if code := ts.Do(http.MethodPost, path, "application/json", body, nil); code != http.StatusCreated {
			t.Fatalf("POST %s: %d", path, code)
		}
	}
	// Once the binding is in RBAC's cache and the denial out of the
	// metrics server's (10 s), the list is allowed.
	allowedAfterTheCache(t, clock, get, "/apis/metrics.k8s.io/v1beta1/nodes")
	var nodes metricsv1beta1.NodeMetricsList
	if code, body := get("/apis/metrics.k8s.io/v1beta1/nodes"); code != http.StatusOK || json.Unmarshal([]byte(body), &nodes) != nil || len(nodes.Items) != 0 {
		t.Errorf("nodes after one scrape: %d %s; want none (no rate yet)", code, body)
	}

	set(plain, 1_700_000_015_000, 107.5, map[string]float64{"default/web": 13, "default/db": 2.5})
	set(secure, 1_700_000_015_000, 51.5, map[string]float64{"kube-system/coredns": 2.15})
	srv.ScrapeOnce(ctx)
	secondScrape := clock.Now() // the fake clock stands still during a scrape
	for _, tc := range []struct{ path, want string }{
		{"/apis/metrics.k8s.io/v1beta1/nodes", "node01 cpu=500m memory=512Mi window=15s;node02 cpu=100m memory=512Mi window=15s"},
		{"/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=disk%3Dssd", "node01 cpu=500m memory=512Mi window=15s"},
		{"/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=metadata.name%3Dnode02", "node02 cpu=100m memory=512Mi window=15s"},
		{"/apis/metrics.k8s.io/v1beta1/nodes/node02", "node02 cpu=100m memory=512Mi window=15s"},
		{"/apis/metrics.k8s.io/v1beta1/pods", "default/db main=100m/64Mi;default/web main=200m/64Mi;kube-system/coredns main=10m/64Mi"},
		{"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", "default/db main=100m/64Mi;default/web main=200m/64Mi"},
		{"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%20in%20(web)", "default/web main=200m/64Mi"},
		{"/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.name%3Dcoredns", "kube-system/coredns main=10m/64Mi"},
		{"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web", "default/web main=200m/64Mi"},
	} {
		code, body := get(tc.path)
		if got := summarize(t, body); code != http.StatusOK || got != tc.want {
			t.Errorf("GET %s: %d %s\n got %s\nwant %s", tc.path, code, body, got, tc.want)
		}
	}
	// kubectl get podmetrics asks for a Table: each pod's usage summed.
	req := httptest.NewRequest(http.MethodGet, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	w := httptest.NewRecorder()
	srv.Handler(nil).ServeHTTP(w, req)
	for _, want := range []string{`"kind":"Table","apiVersion":"meta.k8s.io/v1"`, `{"name":"cpu","type":"string","format":"quantity"`,
		`"cells":["db","100m","64Mi","15s"]`, `"cells":["web","200m","64Mi","15s"]`, `"namespace":"default"`} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("the pods' Table lacks %s: %s", want, w.Body.String())
		}
	}
	for path, want := range map[string]string{
		"/apis/metrics.k8s.io/v1beta1/nodes/node03":                    `nodemetrics.metrics.k8s.io \"node03\" not found`,
		"/apis/metrics.k8s.io/v1beta1/nodes/node09":                    `node \"node09\" not found`,
		"/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods/web": `pods \"web\" not found`,
	} {
		if code, body := get(path); code != http.StatusNotFound || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	if code, body := get("/apis/metrics.k8s.io/v1beta1"); code != http.StatusForbidden ||
		!strings.Contains(body, `forbidden: User \"system:anonymous\" cannot get path \"/apis/metrics.k8s.io/v1beta1\"`) {
		t.Errorf("anonymous discovery: %d %s", code, body)
	}
	binding := `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"anonymous-discovery"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"system:discovery"},
		"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"system:anonymous"}]}`
	if code := ts.Do(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "application/json", binding, nil); code != http.StatusCreated {
		t.Fatalf("binding system:discovery: %d", code)
	}
	allowedAfterTheCache(t, clock, get, "/apis/metrics.k8s.io/v1beta1")
	if code, body := get("/apis/metrics.k8s.io/v1beta1"); code != http.StatusOK || !strings.Contains(body, `"kind":"NodeMetrics"`) || !strings.Contains(body, `"kind":"PodMetrics"`) {
		t.Errorf("discovery: %d %s", code, body)
	}
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after a scrape: %d", code)
	}

	// Its own /metrics, behind the same authorization: a non-resource
	// path that a ClusterRole grants as Prometheus' is granted.
	if code, body := get("/metrics"); code != http.StatusForbidden ||
		!strings.Contains(body, `forbidden: User \"system:anonymous\" cannot get path \"/metrics\"`) {
		t.Errorf("anonymous /metrics: %d %s", code, body)
	}
	for path, body := range map[string]string{
		"/apis/rbac.authorization.k8s.io/v1/clusterroles": `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"prometheus"},
			"rules":[{"nonResourceURLs":["/metrics"],"verbs":["get"]}]}`,
		"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings": `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"prometheus"},
			"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"prometheus"},
			"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"system:anonymous"}]}`,
	} {
		if code := ts.Do(http.MethodPost, path, "application/json", body, nil); code != http.StatusCreated {
			t.Fatalf("POST %s: %d", path, code)
		}
	}
	allowedAfterTheCache(t, clock, get, "/metrics")
	_, body := get("/metrics")
	body = "\n" + body
	// Two rounds of three nodes, node03's all zeros (dropped, yet answered),
	// each taking no time on the fake clock.
	for _, want := range []string{
		`metrics_server_kubelet_request_total{success="true"} 6`,
		`metrics_server_kubelet_request_duration_seconds_count{node="node01"} 2`,
		`metrics_server_kubelet_request_duration_seconds_bucket{node="node02",le="0.005"} 2`,
		`metrics_server_kubelet_last_request_time_seconds{node="node01"} ` + strconv.FormatFloat(float64(secondScrape.Unix()), 'g', -1, 64),
		`metrics_server_manager_tick_duration_seconds_count 2`,
		`metrics_server_manager_tick_duration_seconds_bucket{le="15"} 2`,
		`metrics_server_storage_points{type="node"} 2`,
		`metrics_server_storage_points{type="container"} 3`,
		`# TYPE go_goroutines gauge`,
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
}

// metrics-server's tick buckets: the defaults with the resolution, and
// beyond 10 s halfway to it, 1.5 and 2 times it.
func TestTickBucketsHoldTheResolution(t *testing.T) {
	for _, tc := range []struct {
		resolution time.Duration
		want       string
	}{
		{15 * time.Second, "[0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 12.5 15 22.5 30]"},
		{60 * time.Second, "[0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 35 60 90 120]"},
		{3 * time.Second, "[0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 3 5 10]"},
		{10 * time.Second, "[0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10]"},
		{5 * time.Second, "[0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10]"},
	} {
		if got := fmt.Sprint(bucketsForScrapeDuration(tc.resolution)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.resolution, got, tc.want)
		}
	}
}

// allowedAfterTheCache steps the clock past the authorization cache's
// 10 s until a request of path is no longer forbidden.
func allowedAfterTheCache(t *testing.T, clock *testingclock.FakeClock, get func(string) (int, string), path string) {
	testserver.Eventually(t, "GET "+path+" is allowed", func() (bool, string) {
		clock.Step(11 * time.Second)
		code, body := get(path)
		return code == http.StatusOK, body
	})
}

// summarize is a list's or an object's items in a line each, ";"-joined.
func summarize(t *testing.T, body string) string {
	var obj struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &obj); err != nil {
		return "not JSON: " + body
	}
	items := obj.Items
	if !strings.HasSuffix(obj.Kind, "List") {
		items = []json.RawMessage{json.RawMessage(body)}
	}
	var lines []string
	for _, raw := range items {
		switch {
		case strings.Contains(obj.Kind, "Node"):
			var m metricsv1beta1.NodeMetrics
			json.Unmarshal(raw, &m)
			cpu, mem := m.Usage[corev1.ResourceCPU], m.Usage[corev1.ResourceMemory]
			lines = append(lines, fmt.Sprintf("%s cpu=%dm memory=%s window=%s", m.Name, cpu.MilliValue(), mem.String(), m.Window.Duration))
		default:
			var m metricsv1beta1.PodMetrics
			json.Unmarshal(raw, &m)
			line := m.Namespace + "/" + m.Name
			for _, c := range m.Containers {
				cpu, mem := c.Usage[corev1.ResourceCPU], c.Usage[corev1.ResourceMemory]
				line += fmt.Sprintf(" %s=%dm/%s", c.Name, cpu.MilliValue(), mem.String())
			}
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, ";")
}
