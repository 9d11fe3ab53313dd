package metricsserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/fakekubelet"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/metricsserver/metricsservertest"
)

// Through the API server, as kubectl top asks: the aggregator proxies
// metrics.k8s.io to the metrics server once its discovery answers, with
// the user in the front proxy's headers; the metrics server answers from
// what the fake kubelets served at its last two scrapes.
func TestTheAPIServerServesMetricsFromTheKubeletsThroughTheMetricsServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	t0 := time.Unix(1_700_000_000, 0)
	clock := testingclock.NewFakeClock(t0)
	c := metricsservertest.StartCluster(t, ctx, clock, "node01", "node02")
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node02", Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}}
	c.Create(t, ctx, client.Pods, "default", web)
	c.WaitForPods(t, 2)

	for i, at := range []time.Time{t0, t0.Add(15 * time.Second)} {
		c.Kubelets["node01"].Set(at, 100+float64(i)*3, 700<<20,
			fakekubelet.Container{Namespace: "kube-system", Pod: "metrics-server-0", Name: "metrics-server", CPUSeconds: 5 + float64(i)*0.075, MemoryBytes: 20 << 20})
		c.Kubelets["node02"].Set(at, 50+float64(i)*15, 900<<20,
			fakekubelet.Container{Namespace: "default", Pod: "web", Name: "nginx", CPUSeconds: 1 + float64(i)*7.5, MemoryBytes: 8 << 20})
		c.Metrics.ScrapeOnce(ctx)
	}
	var nodes metricsv1beta1.NodeMetricsList
	testserver.Eventually(t, "the APIService is available and lists the nodes' metrics", func() (bool, string) {
		code := c.Server.Do(http.MethodGet, "/apis/metrics.k8s.io/v1beta1/nodes", "", "", &nodes)
		return code == http.StatusOK && len(nodes.Items) == 2, strings.TrimSpace(http.StatusText(code))
	})
	var got []string
	for _, n := range nodes.Items {
		cpu, mem := n.Usage[corev1.ResourceCPU], n.Usage[corev1.ResourceMemory]
		got = append(got, n.Name+" "+cpu.String()+" "+mem.String())
	}
	if want := "node01 200m 700Mi;node02 1 900Mi"; strings.Join(got, ";") != want {
		t.Errorf("nodes: %s, want %s", strings.Join(got, ";"), want)
	}
	var pod metricsv1beta1.PodMetrics
	if code := c.Server.Do(http.MethodGet, "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web", "", "", &pod); code != http.StatusOK ||
		len(pod.Containers) != 1 || pod.Containers[0].Usage.Cpu().MilliValue() != 500 || pod.Window.Duration != 15*time.Second {
		t.Errorf("pod web: %d %+v", code, pod)
	}
}

// Run scrapes at once, then every --metric-resolution of its clock: the
// second scrape gives the first rate.
func TestTheServerScrapesEveryResolution(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	t0 := time.Unix(1_700_000_000, 0)
	clock := testingclock.NewFakeClock(t0)
	c := metricsservertest.StartCluster(t, ctx, clock, "node01")
	c.Kubelets["node01"].Set(t0, 10, 100<<20)
	go c.Metrics.Run(ctx)
	testserver.Eventually(t, "the first scrape is done and the next one waits for the clock", func() (bool, string) {
		return clock.HasWaiters(), ""
	})
	c.Kubelets["node01"].Set(t0.Add(15*time.Second), 13, 100<<20)
	clock.Step(15 * time.Second)
	testserver.Eventually(t, "the second scrape gives node01 a rate", func() (bool, string) {
		var nodes metricsv1beta1.NodeMetricsList
		code := c.Server.Do(http.MethodGet, "/apis/metrics.k8s.io/v1beta1/nodes", "", "", &nodes)
		return code == http.StatusOK && len(nodes.Items) == 1 && nodes.Items[0].Usage.Cpu().MilliValue() == 200, http.StatusText(code)
	})
}
