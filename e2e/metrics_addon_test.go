package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// addons/metrics-server.yaml end to end, as `make local` applies it: the
// metrics server runs in a pod and scrapes each kubelet at its Node's
// InternalIP and kubelet port from there (the pod network dials a Node's
// address on the host's network), so that `kubectl top nodes` and
// `kubectl top pods` print rows. Each node has a loopback address of
// its own, as hack/run-local.sh gives them. The manifest is the shipped
// one with a shorter resolution (10 s, metrics-server's floor, under a
// 5 s kubelet request timeout) and readiness delay, for a test's time.
// The pods' rows need the runtime to report its containers' CPU and
// memory: while the kubelet reads 0 for them, the test skips that part.
func TestTheMetricsServerAddonScrapesTheKubeletsFromItsPod(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, clusterFlags{secure: true, apiserver: []string{"--bind-address", "0.0.0.0"}},
		kubeletNode{name: "node01", flags: []string{"--node-ip", "127.0.0.2"}},
		kubeletNode{name: "node02", flags: []string{"--node-ip", "127.0.0.3"}})
	k := newKubectl(t, c)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _, _ := k.kubectl(t, "logs", "-n", "kube-system", "deployment/metrics-server")
			scrape, errOut, _ := k.kubectl(t, "get", "--raw", "/api/v1/nodes/node01/proxy/metrics/resource")
			t.Logf("metrics-server's log:\n%s\nnode01's /metrics/resource:\n%s%s", logs, scrape, errOut)
		}
	})
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "metrics-server.yaml", fastMetricsServerManifest(t)))
	k.mustKubectl(t, "run", "load", "--image=busybox", "--", "sh", "-c", "while true; do :; done")

	testserver.EventuallyWithin(t, 90*time.Second, "kubectl top nodes shows both nodes", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "top", "nodes")
		return code == 0 && strings.Contains(out, "node01") && strings.Contains(out, "node02"), out + errOut
	})

	// Its own /metrics, as Prometheus would scrape it: through the API
	// server's service proxy (which comes as system:anonymous), once RBAC
	// lets that user get the path; metrics-server's series, lint-clean.
	k.mustKubectl(t, "create", "clusterrole", "metrics-scraper", "--verb=get", "--non-resource-url=/metrics")
	k.mustKubectl(t, "create", "clusterrolebinding", "metrics-scraper", "--clusterrole=metrics-scraper", "--user=system:anonymous")
	var own string
	testserver.EventuallyWithin(t, 30*time.Second, "metrics-server's /metrics answers", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "--raw", "/api/v1/namespaces/kube-system/services/https:metrics-server:https/proxy/metrics")
		own = out
		return code == 0 && strings.Contains(out, `metrics_server_kubelet_request_duration_seconds_count{node="node02"}`), out + errOut
	})
	for _, family := range []string{"metrics_server_kubelet_request_total", "metrics_server_kubelet_last_request_time_seconds",
		"metrics_server_manager_tick_duration_seconds", "metrics_server_storage_points"} {
		if !strings.Contains(own, "\n# TYPE "+family+" ") {
			t.Errorf("metrics-server's /metrics has no %s", family)
		}
	}
	promtoolCheck(t, "metrics-server", own)

	// From a pod, the other nodes' addresses are the nodes: a kubelet's
	// port, and a NodePort (kube-proxy's rules first); logs and exec
	// still reach the kubelets at theirs.
	k.mustKubectl(t, "run", "web", "--image=nginx", "--port=80")
	k.mustKubectl(t, "expose", "pod", "web", "--type=NodePort", "--port=80")
	nodePort := k.mustKubectl(t, "get", "service", "web", "-o", "jsonpath={.spec.ports[0].nodePort}")
	for _, node := range []string{"node01", "node02"} {
		ip := k.mustKubectl(t, "get", "node", node, "-o", `jsonpath={.status.addresses[?(@.type=="InternalIP")].address}`)
		port := k.mustKubectl(t, "get", "node", node, "-o", "jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}")
		for url, want := range map[string]string{"https://" + ip + ":" + port + "/healthz": "ok", "http://" + ip + ":" + nodePort + "/": "Welcome to nginx!"} {
			testserver.EventuallyWithin(t, 30*time.Second, "the pod load reaches "+url, func() (bool, string) {
				out, errOut, _ := k.kubectl(t, "exec", "load", "--", "wget", "-qO-", "-T", "2", url)
				return strings.Contains(out, want), out + errOut
			})
		}
	}
	k.mustKubectl(t, "logs", "load")

	// metrics-server leaves out a pod whose container reads 0 CPU or
	// memory; the runtime's never do while they run.
	testserver.EventuallyWithin(t, 90*time.Second, "kubectl top pods shows the pod load", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "top", "pods")
		return code == 0 && strings.Contains(out, "load"), out + errOut
	})
}

// startClusterWithMetricsServer is a secure cluster of one node, node01
// (at a loopback address of its own, as hack/run-local.sh gives it), with
// the metrics-server add-on applied as a test can wait for it
// (fastMetricsServerManifest): what kubectl top and the HPA controller
// read. controllerManager are extra flags of the controller manager.
func startClusterWithMetricsServer(t *testing.T, controllerManager ...string) (*cluster, *kubectlRunner) {
	t.Helper()
	c := startClusterWith(t, clusterFlags{secure: true, apiserver: []string{"--bind-address", "0.0.0.0"}, controllerManager: controllerManager},
		kubeletNode{name: "node01", flags: []string{"--node-ip", "127.0.0.2"}})
	k := newKubectl(t, c)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _, _ := k.kubectl(t, "logs", "-n", "kube-system", "deployment/metrics-server")
			top, _, _ := k.kubectl(t, "top", "pods", "-A")
			t.Logf("metrics-server's log:\n%s\nkubectl top pods -A:\n%s", logs, top)
		}
	})
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "metrics-server.yaml", fastMetricsServerManifest(t)))
	return c, k
}

// fastMetricsServerManifest is addons/metrics-server.yaml with the
// resolution and readiness delay a test can wait for.
func fastMetricsServerManifest(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../addons/metrics-server.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := string(b)
	for old, new := range map[string]string{
		"- --metric-resolution=15s": "- --metric-resolution=10s\n        - --kubelet-request-timeout=5s",
		"initialDelaySeconds: 20":   "initialDelaySeconds: 1",
	} {
		if !strings.Contains(manifest, old) {
			t.Fatalf("addons/metrics-server.yaml has no %q", old)
		}
		manifest = strings.Replace(manifest, old, new, 1)
	}
	return manifest
}
