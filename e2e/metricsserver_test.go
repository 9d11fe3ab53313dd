package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/fakekubelet"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/metricsserver/metricsservertest"
)

// The real `kubectl top` against mkube's metrics server behind the API
// server's aggregator, the kubelets being fakes that serve
// /metrics/resource with the readings the test sets: "metrics not
// available yet" until two scrapes give a rate, then each node's CPU and
// memory, in cores and as a share of its allocatable, and each pod's,
// summed or by container, in a namespace or all.
func TestKubectlTopShowsWhatTheMetricsServerScraped(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	t0 := time.Unix(1_700_000_000, 0)
	c := metricsservertest.StartCluster(t, ctx, testingclock.NewFakeClock(t0), "node01", "node02")
	k := newKubectl(t, &cluster{t: t, URL: c.Server.URL})
	for _, name := range []string{"web", "worker"} {
		c.Create(t, ctx, client.Pods, "default", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PodSpec{NodeName: "node02", Containers: []corev1.Container{{Name: "app", Image: "nginx"}, {Name: "sidecar", Image: "busybox"}}}})
	}
	c.WaitForPods(t, 3)
	testserver.Eventually(t, "kubectl top says the metrics are not there yet", func() (bool, string) {
		_, errOut, code := k.kubectl(t, "top", "nodes")
		return code != 0 && strings.Contains(errOut, "metrics not available yet"), errOut
	})

	for i, at := range []time.Time{t0, t0.Add(15 * time.Second)} {
		f := float64(i)
		c.Kubelets["node01"].Set(at, 100+3*f, 700<<20,
			fakekubelet.Container{Namespace: "kube-system", Pod: "metrics-server-0", Name: "metrics-server", CPUSeconds: 5 + 0.075*f, MemoryBytes: 20 << 20})
		c.Kubelets["node02"].Set(at, 50+15*f, 900<<20,
			fakekubelet.Container{Namespace: "default", Pod: "web", Name: "app", CPUSeconds: 1 + 7.5*f, MemoryBytes: 8 << 20},
			fakekubelet.Container{Namespace: "default", Pod: "web", Name: "sidecar", CPUSeconds: 1 + 0.15*f, MemoryBytes: 2 << 20},
			fakekubelet.Container{Namespace: "default", Pod: "worker", Name: "app", CPUSeconds: 2 + 1.5*f, MemoryBytes: 30 << 20},
			fakekubelet.Container{Namespace: "default", Pod: "worker", Name: "sidecar", CPUSeconds: 1 + 0.015*f, MemoryBytes: 1 << 20})
		c.Metrics.ScrapeOnce(ctx)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "nodes"}, `
NAME CPU(cores) CPU(%) MEMORY(bytes) MEMORY(%)
node01 200m 10% 700Mi 17%
node02 1000m 50% 900Mi 21%`},
		{[]string{"top", "pods"}, `
NAME CPU(cores) MEMORY(bytes)
web 510m 10Mi
worker 101m 31Mi`},
		{[]string{"top", "pods", "-A"}, `
NAMESPACE NAME CPU(cores) MEMORY(bytes)
default web 510m 10Mi
default worker 101m 31Mi
kube-system metrics-server-0 5m 20Mi`},
		{[]string{"top", "pods", "--containers"}, `
POD NAME CPU(cores) MEMORY(bytes)
web app 500m 8Mi
web sidecar 10m 2Mi
worker app 100m 30Mi
worker sidecar 1m 1Mi`},
	} {
		out := k.mustKubectl(t, tc.args...)
		if got, want := fields(out), strings.TrimSpace(tc.want); got != want {
			t.Errorf("kubectl %s:\n%s\nwant (spacing aside)\n%s", strings.Join(tc.args, " "), out, want)
		}
	}
}

// fields is out with each line's columns one space apart.
func fields(out string) string {
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		lines = append(lines, strings.Join(strings.Fields(line), " "))
	}
	return strings.Join(lines, "\n")
}

// addons/metrics-server.yaml as a learner applies it: the catalog's
// registry.k8s.io/metrics-server/metrics-server runs mkube's metrics
// server in kube-system as its service account, which reads the nodes
// and the API server's authentication configuration; its Deployment
// becomes ready, the APIService available, and the API server answers
// metrics.k8s.io's discovery and lists from it.
func TestTheMetricsServerAddonDeploysAsTheRealOne(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, clusterFlags{secure: true, apiserver: []string{"--bind-address", "0.0.0.0"}}, kubeletNode{name: "node01"})
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", "../addons/metrics-server.yaml")
	if _, errOut, code := k.kubectl(t, "rollout", "status", "deployment/metrics-server", "-n", "kube-system", "--timeout=60s"); code != 0 {
		logs, _, _ := k.kubectl(t, "logs", "-n", "kube-system", "deployment/metrics-server")
		t.Fatalf("metrics-server is not ready: %s\nits log:\n%s", errOut, logs)
	}
	testserver.EventuallyWithin(t, 30*time.Second, "the APIService is available", func() (bool, string) {
		out := k.mustKubectl(t, "get", "apiservice", "v1beta1.metrics.k8s.io", "-o",
			"jsonpath={.status.conditions[0].status} {.status.conditions[0].reason}: {.status.conditions[0].message}")
		return out == "True Passed: all checks passed", out
	})
	if out := k.mustKubectl(t, "api-resources", "--api-group=metrics.k8s.io"); !strings.Contains(out, "NodeMetrics") || !strings.Contains(out, "PodMetrics") {
		t.Errorf("kubectl api-resources --api-group=metrics.k8s.io:\n%s", out)
	}
	if out := k.mustKubectl(t, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"); !strings.Contains(out, `"kind":"NodeMetricsList"`) {
		t.Errorf("the nodes' metrics: %s", out)
	}
}
