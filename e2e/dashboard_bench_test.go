package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkDashboardDensity is issue 31's figure for the dashboard
// itself: its CPU and RSS while it list-watches a big cluster. One
// `kubelet --nodes N` holds N nodes and 30 bound pods on each (5,000 and
// 150,000 by default, Kubernetes' limits), created as BenchmarkKubeletDensity
// creates them, with bin/dashboard attached from the start:
//
//	ramp-CPU-s      the dashboard's CPU seconds from the first create to every pod Running
//	steady-cores    its cores over steadyFor once the ramp's tail has passed
//	RSS-MiB         its resident memory at the end
//	snapshot-KiB    the first message a new browser gets (sse.go, snapshot.go)
//	snapshot-ms     how long the dashboard took to send it
//
// MKUBE_BENCH_NODES sets N.
//
//	go test -run '^$' -bench DashboardDensity -benchtime 1x -timeout 60m ./e2e/
func BenchmarkDashboardDensity(b *testing.B) {
	nodes := 5000
	if v := envInt("MKUBE_BENCH_NODES"); v > 0 {
		nodes = v
	}
	for range b.N {
		dashboardDensity(b, nodes, 30)
	}
}

// settleFor lets the ramp's tail (the last status writes and Events)
// pass; steadyFor is then measured: heartbeats and leases only, which
// the dashboard's node informer receives.
const settleFor, steadyFor = 30 * time.Second, 30 * time.Second

func dashboardDensity(b *testing.B, nodes, podsPerNode int) {
	c := &cluster{t: b, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(b)), logs: map[string]string{}, dir: b.TempDir()}
	c.startAPIServer(filepath.Join(c.dir, "etcd"), "--log-level", "warn")
	c.waitReady()
	c.startKubelet("kubelet", kubeletNode{name: "node", flags: []string{"--nodes", fmt.Sprint(nodes), "--log-level", "warn",
		"--image-pull-delay", "0s"}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients * 2}}
	waitNodesReady(b, client, c.URL, nodes)
	url := startDashboard(b, c, "--server", c.URL, "--log-level", "warn")
	pid := c.procs["dashboard"].Pid

	pods := nodes * podsPerNode
	_, done := watchRunning(b, client, c.URL, "dense-", pods)
	width := len(fmt.Sprint(nodes))
	_, cpu0 := procUsage(pid)
	start := time.Now()
	parallel(pods, func(i int) {
		node := fmt.Sprintf("node-%0*d", width, i%nodes+1)
		post(b, client, c.URL+"/api/v1/namespaces/default/pods", fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dense-%d"},
		"spec":{"nodeName":"%s","automountServiceAccountToken":false,"containers":[%s]}}`, i, node, pauseContainer))
	})
	select {
	case <-done:
	case <-time.After(30 * time.Minute):
		b.Fatalf("not every pod became Running")
	}
	_, cpu1 := procUsage(pid)
	b.ReportMetric(time.Since(start).Seconds(), "all-running-s")
	b.ReportMetric(cpu1-cpu0, "ramp-CPU-s")

	time.Sleep(settleFor) // a benchmark measuring a steady state, not a test waiting for something
	_, cpu2 := procUsage(pid)
	time.Sleep(steadyFor)
	rss, cpu3 := procUsage(pid)
	b.ReportMetric((cpu3-cpu2)/steadyFor.Seconds(), "steady-cores")
	b.ReportMetric(rss, "RSS-MiB")

	size, took := snapshotSize(b, url)
	b.ReportMetric(float64(size)/1024, "snapshot-KiB")
	b.ReportMetric(float64(took.Milliseconds()), "snapshot-ms")
	rss, _ = procUsage(pid)
	b.ReportMetric(rss, "RSS-after-snapshot-MiB")
}

// snapshotSize opens the page's event stream as a browser would and
// measures its first message, the snapshot.
func snapshotSize(b *testing.B, url string) (int, time.Duration) {
	start := time.Now()
	resp, err := http.Get(url + "/api/stream")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	size := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatalf("read the snapshot: %v", err)
		}
		size += len(line)
		if strings.HasPrefix(line, "data: ") {
			return size, time.Since(start)
		}
	}
}
