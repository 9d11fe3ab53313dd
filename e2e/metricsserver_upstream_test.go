package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// upstreamMetricsServer is the real metrics-server, built by `make tools`
// from sigs.k8s.io/metrics-server v0.8.0 (the Makefile's
// bin/metrics-server-v0.8.0; bin/metrics-server is mkube's own).
const upstreamMetricsServer = "metrics-server-v0.8.0"

// TestTheRealMetricsServerScrapesMkubesKubelets: the real metrics-server
// v0.8.0 runs on the host as a learner runs one outside a cluster: its
// own --secure-port, the admin's kubeconfig for the API server, for
// delegated authentication and for authorization, and registered as
// v1beta1.metrics.k8s.io by an APIService whose Service is of type
// ExternalName, 127.0.0.1 (an EndpointSlice may not name a loopback
// address), at that port. It scrapes
// node01's kubelet, which runs as kubeadm configures one (anonymous off,
// Webhook authorization), over HTTPS (its self-signed certificate,
// --kubelet-insecure-tls) with the admin's client certificate, which the
// kubelet's --client-ca-file verifies. The real kubectl top nodes and
// top pods then show its numbers, a busy pod near a core, and an HPA on
// CPU (autoscaling/v2) reads them into status.currentMetrics.
func TestTheRealMetricsServerScrapesMkubesKubelets(t *testing.T) {
	t.Parallel()
	bin, err := filepath.Abs(filepath.Join("..", "bin", upstreamMetricsServer))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is not built: `make tools` builds it (sigs.k8s.io/metrics-server/cmd/metrics-server@v0.8.0): %v", bin, err)
	}
	kubeadm := []string{"--anonymous-auth=false", "--authentication-token-webhook", "--authorization-mode", "Webhook"}
	c := startClusterWith(t, clusterFlags{secure: true, controllerManager: []string{"--horizontal-pod-autoscaler-sync-period", "1s"}},
		kubeletNode{name: "node01", flags: kubeadm})
	k := newKubectl(t, c)
	port := freePort(t)
	admin := filepath.Join(c.certDir(), "admin.kubeconfig")
	c.startAs("metrics-server-v0.8.0", bin, "--kubeconfig", admin,
		"--authentication-kubeconfig", admin, "--authorization-kubeconfig", admin,
		"--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1", "--cert-dir", t.TempDir(),
		"--kubelet-insecure-tls", "--kubelet-preferred-address-types=InternalIP", "--kubelet-use-node-status-port",
		"--metric-resolution", "10s", "--kubelet-request-timeout", "5s", "-v", "2")
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(c.logs["metrics-server-v0.8.0"])
			lines := strings.Split(string(log), "\n")
			t.Logf("---- metrics-server v0.8.0 (last lines) ----\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	began := time.Now()
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "metrics-server-on-the-host.yaml", `apiVersion: v1
kind: Service
metadata:
  name: metrics-server
  namespace: kube-system
spec:
  type: ExternalName
  externalName: 127.0.0.1
  ports:
  - {name: https, port: `+strconv.Itoa(port)+`}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  group: metrics.k8s.io
  version: v1beta1
  service: {name: metrics-server, namespace: kube-system, port: `+strconv.Itoa(port)+`}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
`))
	k.mustKubectl(t, "run", "busy", "--image=busybox", "--", "sh", "-c", "while true; do :; done")

	// Two scrapes make a rate: kubectl top answers after the second.
	var nodes string
	testserver.EventuallyWithin(t, 90*time.Second, "kubectl top nodes shows node01 from the real metrics-server", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "top", "nodes")
		nodes = out
		return code == 0 && regexp.MustCompile(`(?m)^node01\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%`).MatchString(out), out + errOut
	})
	t.Logf("kubectl top nodes answered %.1fs after the APIService was applied:\n%s", time.Since(began).Seconds(), nodes)
	var pods string
	testserver.EventuallyWithin(t, 90*time.Second, "kubectl top pods shows the busy pod near a core", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "top", "pods")
		pods = out
		m := regexp.MustCompile(`(?m)^busy\s+(\d+)m\s+\d+Mi`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			return false, out + errOut
		}
		milli, _ := strconv.Atoi(m[1])
		return milli >= 500, out
	})
	t.Logf("kubectl top pods answered %.1fs after the APIService was applied:\n%s", time.Since(began).Seconds(), pods)
	if out := k.mustKubectl(t, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/busy"); !strings.Contains(out, `"kind":"PodMetrics"`) {
		t.Errorf("the PodMetrics of busy:\n%s", out)
	}

	// The HPA controller reads the same numbers through the aggregator.
	k.mustKubectl(t, "create", "deployment", "spin", "--image=busybox", "--", "sh", "-c", "while true; do :; done")
	k.mustKubectl(t, "set", "resources", "deployment", "spin", "--requests=cpu=200m", "--limits=cpu=200m")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "hpa.yaml", `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: spin
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: spin}
  minReplicas: 1
  maxReplicas: 2
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 50}
`))
	testserver.EventuallyWithin(t, 120*time.Second, "the HPA reads spin's CPU from the real metrics-server", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "hpa", "spin", "-o", "jsonpath={.status.currentMetrics[0].resource.current.averageUtilization} {.status.currentMetrics[0].resource.current.averageValue}")
		util, _, _ := strings.Cut(strings.TrimSpace(out), " ")
		n, err := strconv.Atoi(util)
		return err == nil && n > 0, out
	})
	out := k.mustKubectl(t, "get", "hpa", "spin")
	if !regexp.MustCompile(`cpu: \d+%/50%`).MatchString(out) {
		t.Errorf("kubectl get hpa spin:\n%s\nwant TARGETS cpu: N%%/50%%", out)
	}
	t.Logf("kubectl get hpa, %.1fs after the APIService was applied:\n%s", time.Since(began).Seconds(), out)
}
