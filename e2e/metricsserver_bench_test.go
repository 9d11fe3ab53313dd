package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// BenchmarkMetricsServer is the metrics server (cmd/metrics-server)
// scraping 1,000 nodes' /metrics/resource every 15 s
// (--metric-resolution=15s, its shipped manifest's): one `kubelet
// --nodes 1000` with 30 pods a node (30,000, created bound, as
// BenchmarkKubeletDensity's), then the metrics server on the admin's
// kubeconfig, as addons/metrics-server.yaml would find the nodes
// (InternalIP, the status port, each node's annotated path).
//
//	go test -run '^$' -bench MetricsServer -benchtime 1x -timeout 60m ./e2e/
//
// Once a round has got every node's and pod's metrics, a minute (four
// resolutions) is measured: the server's cores and RSS, and per node,
// against metrics-server's published ~1 millicore and ~3 MB a node;
// its CPU per round; how long a round takes, from the server's own log
// line of each (-v 6); and the kubelet's cores over that minute less
// over the minute before the server started: what serving the scrapes
// costs it, also per node scrape. MKUBE_BENCH_NODES sets the nodes (a
// quick look: 50).
func BenchmarkMetricsServer(b *testing.B) {
	nodes := 1000
	if v := envInt("MKUBE_BENCH_NODES"); v > 0 {
		nodes = v
	}
	for range b.N {
		metricsServer(b, nodes, 30)
	}
}

func metricsServer(b *testing.B, nodes, podsPerNode int) {
	c := &cluster{t: b, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(b)), logs: map[string]string{}, dir: b.TempDir()}
	c.startAPIServer(filepath.Join(c.dir, "etcd"), "--log-level", "warn")
	c.waitReady()
	c.startKubelet("kubelet", kubeletNode{name: "node", flags: []string{"--nodes", fmt.Sprint(nodes), "--log-level", "warn",
		"--image-pull-delay", "0s", "--port", fmt.Sprint(freePort(b))}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients * 2}}
	waitNodesReady(b, client, c.URL, nodes)
	pods := nodes * podsPerNode
	_, done := watchRunning(b, client, c.URL, "ms-", pods)
	width := len(fmt.Sprint(nodes))
	parallel(pods, func(i int) {
		post(b, client, c.URL+"/api/v1/namespaces/default/pods", fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ms-%d"},
		"spec":{"nodeName":"node-%0*d","automountServiceAccountToken":false,"containers":[%s]}}`, i, width, i%nodes+1, pauseContainer))
	})
	select {
	case <-done:
	case <-time.After(30 * time.Minute):
		b.Fatalf("not every pod became Running")
	}

	// The start's tail passes, then the kubelet's minute without the
	// metrics server: what the scrapes' minute is compared with. (A
	// benchmark measuring, not a test waiting for something.)
	const settle, window = 30 * time.Second, time.Minute
	time.Sleep(settle)
	kubelet := c.procs["kubelet"].Pid
	_, k0 := procUsage(kubelet)
	time.Sleep(window)
	_, k1 := procUsage(kubelet)

	c.start("metrics-server", "--kubeconfig", filepath.Join(c.certDir(), "admin.kubeconfig"), "--secure-port", fmt.Sprint(freePort(b)),
		"--metric-resolution", "15s", "--kubelet-preferred-address-types", "InternalIP", "--kubelet-use-node-status-port", "--kubelet-insecure-tls", "--v", "6")
	log := c.logs["metrics-server"]
	testserver.EventuallyWithin(b, 5*time.Minute, "a scrape round with every node's and pod's metrics", func() (bool, string) {
		rounds := scrapeRounds(b, log)
		if len(rounds) == 0 {
			return false, "no round yet"
		}
		last := rounds[len(rounds)-1]
		return last.nodes == nodes && last.pods == pods, fmt.Sprintf("%+v", last)
	})
	ms := c.procs["metrics-server"].Pid
	before := len(scrapeRounds(b, log))
	_, ms0 := procUsage(ms)
	_, k2 := procUsage(kubelet)
	time.Sleep(window)
	rss, ms1 := procUsage(ms)
	_, k3 := procUsage(kubelet)
	rounds := scrapeRounds(b, log)[before:]
	if len(rounds) == 0 {
		b.Fatal("no scrape round in the measured minute")
	}
	var total, longest time.Duration
	for _, r := range rounds {
		if r.nodes != nodes || r.pods != pods {
			b.Errorf("a round got %d nodes' and %d pods' metrics, want %d and %d", r.nodes, r.pods, nodes, pods)
		}
		total += r.took
		longest = max(longest, r.took)
	}
	cores := (ms1 - ms0) / window.Seconds()
	b.ReportMetric(cores, "ms-cores")
	b.ReportMetric(cores*1000/float64(nodes), "ms-millicores/node")
	b.ReportMetric(rss, "ms-RSS-MiB")
	b.ReportMetric(rss*1024/float64(nodes), "ms-KiB/node")
	b.ReportMetric((ms1-ms0)/float64(len(rounds)), "ms-cpu-s/round")
	b.ReportMetric(float64(total.Milliseconds())/float64(len(rounds)), "round-ms")
	b.ReportMetric(float64(longest.Milliseconds()), "round-max-ms")
	added := (k3 - k2) - (k1 - k0)
	b.ReportMetric(added/window.Seconds(), "kubelet-added-cores")
	b.ReportMetric(added*1e6/float64(len(rounds)*nodes), "kubelet-cpu-µs/node-scrape")
}

// scrapeRound is one "Scrape finished" line of the metrics server's log.
type scrapeRound struct {
	nodes, pods int // whose metrics it got
	took        time.Duration
}

var scrapeLine = regexp.MustCompile(`msg="Scrape finished".* nodeMetrics=(\d+) podMetrics=(\d+) duration=(\S+)`)

// scrapeRounds reads the rounds the log at path has so far.
func scrapeRounds(b *testing.B, path string) []scrapeRound {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []scrapeRound
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		m := scrapeLine.FindStringSubmatch(lines.Text())
		if m == nil {
			continue
		}
		nodes, _ := strconv.Atoi(m[1])
		pods, _ := strconv.Atoi(m[2])
		took, err := time.ParseDuration(m[3])
		if err != nil {
			b.Fatalf("a round's duration %q: %v", m[3], err)
		}
		out = append(out, scrapeRound{nodes: nodes, pods: pods, took: took})
	}
	return out
}
