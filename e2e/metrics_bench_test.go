package e2e

import (
	"compress/gzip"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// BenchmarkMetricsScrape is the cost of serving /metrics: the real
// binaries (API server, controller manager, scheduler, one `kubelet
// --nodes 100`) after a Deployment of 3,000 pods (30 a node) has come up
// through all of them, then each endpoint scraped as Prometheus scrapes
// it (the text format, gzip), one scrape after another for 2 s (at least
// 10), on one connection:
//
//	go test -run '^$' -bench MetricsScrape -benchtime 1x -timeout 30m ./e2e/
//
// Each endpoint reports ms/scrape (the client's time for the whole
// body), bytes (the text) and gzip-bytes (what crossed the wire), and
// cpu-ms/scrape, the serving process's CPU over the scrapes less its CPU
// over as long a time just before them, per scrape (its clock ticks are
// 10 ms: a rough figure for the cheap endpoints; below 0 when the
// process's own work varied more than the scrapes cost). The kubelet's are one
// node's (30 pods). MKUBE_BENCH_NODES and MKUBE_BENCH_PODS change the
// 100 nodes and 3,000 pods.
func BenchmarkMetricsScrape(b *testing.B) {
	nodes, pods := 100, 3000
	if v := envInt("MKUBE_BENCH_NODES"); v > 0 {
		nodes = v
	}
	if v := envInt("MKUBE_BENCH_PODS"); v > 0 {
		pods = v
	}
	c, kubeletPort := loadedCluster(b, nodes, pods)
	// The start's tail (the last status writes, events) passes before
	// the first process's quiet window is measured. (A benchmark
	// measuring, not a test waiting for something.)
	time.Sleep(30 * time.Second)
	admin, err := tls.LoadX509KeyPair(filepath.Join(c.certDir(), "admin.crt"), filepath.Join(c.certDir(), "admin.key"))
	if err != nil {
		b.Fatal(err)
	}
	// The components' ports (the kubelet's too) are self-signed, as `curl -k` and
	// Prometheus' insecure_skip_verify take them; the admin's
	// certificate is who reads /metrics.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{admin}}}}
	node := fmt.Sprintf("https://127.0.0.1:%d/nodes/node-%0*d", kubeletPort, len(fmt.Sprint(nodes)), 1)
	for _, e := range []struct{ name, process, url string }{
		{"apiserver", "apiserver", c.URL + "/metrics"},
		{"scheduler", "scheduler", fmt.Sprintf("https://127.0.0.1:%d/metrics", c.componentPorts["scheduler"])},
		{"controller-manager", "controller-manager", fmt.Sprintf("https://127.0.0.1:%d/metrics", c.componentPorts["controller-manager"])},
		{"kubelet", "kubelet", node + "/metrics"},
		{"kubelet_cadvisor", "kubelet", node + "/metrics/cadvisor"},
		{"kubelet_resource", "kubelet", node + "/metrics/resource"},
	} {
		b.Run(e.name, func(b *testing.B) {
			pid := c.procs[e.process].Pid
			scrapeOnce(b, client, e.url) // the connection, and a lazily made registry, before the clock
			const window = 2 * time.Second
			_, idle0 := procUsage(pid)
			time.Sleep(window) // the process's own work, to take off the scrapes' CPU
			_, idle1 := procUsage(pid)
			_, cpu0 := procUsage(pid)
			start := time.Now()
			var scrapes, text, wire int
			for scrapes < 10 || time.Since(start) < window {
				text, wire = scrapeOnce(b, client, e.url)
				scrapes++
			}
			took := time.Since(start)
			_, cpu1 := procUsage(pid)
			busy := (cpu1 - cpu0) - (idle1-idle0)*took.Seconds()/window.Seconds()
			b.ReportMetric(float64(took.Microseconds())/1000/float64(scrapes), "ms/scrape")
			b.ReportMetric(busy*1000/float64(scrapes), "cpu-ms/scrape")
			b.ReportMetric(float64(text), "bytes")
			b.ReportMetric(float64(wire), "gzip-bytes")
		})
	}
}

// scrapeOnce GETs url as Prometheus does and returns the size of the
// text and of what came over the wire.
func scrapeOnce(b *testing.B, client *http.Client, url string) (text, wire int) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	req.Header.Set("Accept-Encoding", "gzip") // set by hand, so the transport leaves the body compressed
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	counted := &countingReader{r: resp.Body}
	var body io.Reader = counted
	if resp.Header.Get("Content-Encoding") == "gzip" {
		if body, err = gzip.NewReader(counted); err != nil {
			b.Fatalf("GET %s: %v", url, err)
		}
	}
	n, err := io.Copy(io.Discard, body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return int(n), counted.n
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// loadedCluster runs the four programs, the kubelet a fleet of nodes on
// its port (returned), and a Deployment of pods, all Running. The
// scheduler and the controller manager trust the cluster's CA for
// client certificates on their secure ports.
func loadedCluster(b *testing.B, nodes, pods int) (*cluster, int) {
	c := &cluster{t: b, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(b)), logs: map[string]string{}, dir: b.TempDir()}
	c.startAPIServer(filepath.Join(c.dir, "etcd"), "--log-level", "warn")
	c.waitReady()
	clientCA := []string{"--client-ca-file", filepath.Join(c.certDir(), "ca.crt"), "--log-level", "warn"}
	c.start("controller-manager", append([]string{"--server", c.URL, "--root-ca-file", filepath.Join(c.certDir(), "ca.crt"),
		"--node-root", filepath.Join(c.dir, "nodes"), "--nfs-root", filepath.Join(c.dir, "nfs")}, clientCA...)...)
	c.start("scheduler", append([]string{"--server", c.URL}, clientCA...)...)
	kubeletPort := freePort(b)
	c.startKubelet("kubelet", kubeletNode{name: "node", flags: []string{"--nodes", fmt.Sprint(nodes), "--log-level", "warn",
		"--image-pull-delay", "0s", "--port", fmt.Sprint(kubeletPort)}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients * 2}}
	waitNodesReady(b, client, c.URL, nodes)

	post(b, client, c.URL+"/apis/apps/v1/namespaces/default/deployments", fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment",
	"metadata":{"name":"load"},"spec":{"replicas":%d,"selector":{"matchLabels":{"app":"load"}},"template":{"metadata":{"labels":{"app":"load"}},
	"spec":{"automountServiceAccountToken":false,"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}}}}`, pods))
	testserver.EventuallyWithin(b, 20*time.Minute, fmt.Sprintf("the Deployment's %d pods ready", pods), func() (bool, string) {
		var d struct{ Status struct{ ReadyReplicas int } }
		getJSON(b, client, c.URL+"/apis/apps/v1/namespaces/default/deployments/load", &d)
		return d.Status.ReadyReplicas == pods, fmt.Sprintf("%d ready", d.Status.ReadyReplicas)
	})
	return c, kubeletPort
}
