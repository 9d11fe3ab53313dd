package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// The node side's two figures (issue: "containers that live and die"):
//
//	go test -run '^$' -bench 'PodStartup|KubeletDensity' -benchtime 1x -timeout 60m ./e2e/
//
// BenchmarkPodStartup is Kubernetes' pod startup SLI: the time from a
// pod's creation to the kubelet reporting it Running, measured here from
// the client's create request to the watch event that shows it Running,
// with pods created at a steady 100 per second over 100 nodes (one
// `kubelet --nodes 100`), through the real scheduler. Kubernetes' SLO is
// p99 ≤ 5 s. MKUBE_BENCH_PODS sets how many pods (default 3,000: 30 s).
func BenchmarkPodStartup(b *testing.B) {
	pods := 3000
	if v := envInt("MKUBE_BENCH_PODS"); v > 0 {
		pods = v
	}
	for range b.N {
		podStartup(b, 100, pods, 100)
	}
}

func podStartup(b *testing.B, nodes, pods, perSecond int) {
	c, client := startSchedulingFleet(b, nodes)

	running, done := watchRunning(b, client, c.URL, "start-", pods)
	created := make([]time.Time, pods)
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
	var wg sync.WaitGroup
	for i := range pods {
		<-tick.C
		created[i] = time.Now()
		wg.Go(func() {
			post(b, client, c.URL+"/api/v1/namespaces/default/pods", fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"start-%d"},
			"spec":{"automountServiceAccountToken":false,"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}}`, i))
		})
	}
	wg.Wait()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		b.Fatalf("not every pod became Running")
	}
	lat := make([]time.Duration, 0, pods)
	for i, at := range running() {
		lat = append(lat, at.Sub(created[i]))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Milliseconds()), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "max-ms")
	rss, cpu := procUsage(c.procs["kubelet"].Pid)
	b.ReportMetric(rss, "kubelet-RSS-MiB")
	b.ReportMetric(cpu, "kubelet-CPU-s")
}

// startSchedulingFleet is the API server, the scheduler and one `kubelet
// --nodes N` (no image pull delay, 250 pods a node), quiet at warn, once
// the N nodes are Ready; the client has connections for benchClients
// creators.
func startSchedulingFleet(t testing.TB, nodes int) (*cluster, *http.Client) {
	c := &cluster{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), logs: map[string]string{}, dir: t.TempDir()}
	c.startAPIServer(filepath.Join(c.dir, "etcd"), "--log-level", "warn")
	c.waitReady()
	c.start("scheduler", "--server", c.URL, "--log-level", "warn")
	c.startKubelet("kubelet", kubeletNode{name: "node", flags: []string{"--nodes", fmt.Sprint(nodes), "--log-level", "warn",
		"--image-pull-delay", "0s", "--pods", "250"}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients * 2}}
	waitNodesReady(t, client, c.URL, nodes)
	return c, client
}

// BenchmarkKubeletDensity is one `kubelet --nodes N` holding N nodes and
// 30 pods on each (Kubernetes' limits: 5,000 nodes, 150,000 pods): the
// pods are created bound (spec.nodeName set, no scheduler), and once all
// run and a minute has passed, the kubelet's CPU over a minute of steady
// state (heartbeats, leases, nothing else) and its RSS are reported. MKUBE_BENCH_NODES sets
// N (default 5,000).
func BenchmarkKubeletDensity(b *testing.B) {
	nodes := 5000
	if v := envInt("MKUBE_BENCH_NODES"); v > 0 {
		nodes = v
	}
	for range b.N {
		cores := density(b, nodes, 30, pauseContainer)
		b.ReportMetric(cores, "kubelet-cores")
	}
}

// The benchmarks' pods mount no service-account token: no controller
// manager runs to publish kube-root-ca.crt, which the token volume needs
// (a pod would wait for it, as on Kubernetes), and the figures stay
// those of the pods alone.

// pauseContainer is what the density benchmark's pods run.
const pauseContainer = `{"name":"c","image":"registry.k8s.io/pause:3.10"}`

// probedContainer is a busybox with an exec readiness probe, every 10 s
// (the default period).
const (
	probe           = `,"readinessProbe":{"exec":{"command":["cat","/etc/hostname"]}}`
	probedContainer = `{"name":"c","image":"busybox:1.36","command":["sleep","3600"]` + probe + `}`
)

// BenchmarkProbes is the cost of probing: 10,000 pods with one exec
// readiness probe each, every 10 s, on one `kubelet --nodes 100`, against
// the same pods without a probe. cpu-µs/probe is the kubelet's (and its
// in-process runtime's) CPU per probe run.
func BenchmarkProbes(b *testing.B) {
	var base, probed float64
	// Each run is its own cluster, stopped before the next starts.
	b.Run("without", func(b *testing.B) {
		base = density(b, 100, 100, strings.ReplaceAll(probedContainer, probe, ""))
		b.ReportMetric(base, "kubelet-cores")
	})
	b.Run("with", func(b *testing.B) {
		probed = density(b, 100, 100, probedContainer)
		const probesPerSecond = 100 * 100 / 10
		b.ReportMetric(probed, "kubelet-cores")
		b.ReportMetric((probed-base)/probesPerSecond*1e6, "cpu-µs/probe")
	})
}

// density runs nodes × podsPerNode pods of one container each and
// returns the kubelet's cores at steady state.
func density(b *testing.B, nodes, podsPerNode int, container string) float64 {
	c := &cluster{t: b, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(b)), logs: map[string]string{}, dir: b.TempDir()}
	c.startAPIServer(filepath.Join(c.dir, "etcd"), "--log-level", "warn")
	c.waitReady()
	kubeletPort := freePort(b)
	c.startKubelet("kubelet", kubeletNode{name: "node", flags: []string{"--nodes", fmt.Sprint(nodes), "--log-level", "warn",
		"--image-pull-delay", "0s", "--port", fmt.Sprint(kubeletPort)}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients * 2,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the kubelet's port signs itself
	start := time.Now()
	waitNodesReady(b, client, c.URL, nodes)
	b.ReportMetric(time.Since(start).Seconds(), "register-s")

	pods := nodes * podsPerNode
	_, done := watchRunning(b, client, c.URL, "dense-", pods)
	width := len(fmt.Sprint(nodes))
	start = time.Now()
	parallel(pods, func(i int) {
		node := fmt.Sprintf("node-%0*d", width, i%nodes+1)
		post(b, client, c.URL+"/api/v1/namespaces/default/pods", fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dense-%d"},
		"spec":{"nodeName":"%s","automountServiceAccountToken":false,"containers":[%s]}}`, i, node, container))
	})
	select {
	case <-done:
	case <-time.After(30 * time.Minute):
		b.Fatalf("not every pod became Running")
	}
	b.ReportMetric(time.Since(start).Seconds(), "all-running-s")
	// A minute for the start's tail (events, the last status writes) to
	// pass, then a minute of steady state: a benchmark measuring it, not
	// a test waiting for something.
	const settle, steady = time.Minute, time.Minute
	time.Sleep(settle)
	rss0, cpu0 := procUsage(c.procs["kubelet"].Pid)
	if dir := os.Getenv("MKUBE_BENCH_PROFILE"); dir != "" {
		// The steady minute's CPU profile and the heap after it, from the
		// kubelet's own /debug/pprof: what the cores and the RSS go to.
		debug := fmt.Sprintf("https://127.0.0.1:%d/debug/pprof/", kubeletPort)
		saveURL(b, client, debug+fmt.Sprintf("profile?seconds=%d", int(steady.Seconds())), filepath.Join(dir, "kubelet-cpu.pprof"))
		saveURL(b, client, debug+"heap", filepath.Join(dir, "kubelet-heap.pprof"))
	} else {
		time.Sleep(steady)
	}
	rss, cpu := procUsage(c.procs["kubelet"].Pid)
	b.ReportMetric(max(rss, rss0), "kubelet-RSS-MiB")
	arss, _ := procUsage(c.procs["apiserver"].Pid)
	b.ReportMetric(arss, "apiserver-RSS-MiB")
	return (cpu - cpu0) / steady.Seconds()
}

// waitNodesReady waits until n nodes are Ready.
func waitNodesReady(b testing.TB, client *http.Client, url string, n int) {
	testserver.EventuallyWithin(b, 10*time.Minute, fmt.Sprintf("%d nodes Ready", n), func() (bool, string) {
		var list struct {
			Items []struct {
				Status struct {
					Conditions []struct{ Type, Status string }
				}
			}
		}
		getJSON(b, client, url+"/api/v1/nodes", &list)
		ready := 0
		for _, n := range list.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					ready++
				}
			}
		}
		return ready == n, fmt.Sprintf("%d Ready", ready)
	})
}

// watchRunning watches pods named prefix-<i> and records when each was
// first seen Running; done is closed once all n have been. running
// returns the times by index.
func watchRunning(b *testing.B, client *http.Client, url, prefix string, n int) (running func() []time.Time, done <-chan struct{}) {
	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	getJSON(b, client, url+"/api/v1/pods?limit=1", &list)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	var mu sync.Mutex
	at := make([]time.Time, n)
	seen := 0
	donec := make(chan struct{})
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"/api/v1/pods?watch=true&resourceVersion="+list.Metadata.ResourceVersion, nil)
		resp, err := client.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		for {
			var ev struct {
				Object struct {
					Metadata struct{ Name string }
					Status   struct{ Phase string }
				}
			}
			if dec.Decode(&ev) != nil {
				return
			}
			var i int
			name, ok := strings.CutPrefix(ev.Object.Metadata.Name, prefix)
			if !ok || ev.Object.Status.Phase != "Running" {
				continue
			}
			if _, err := fmt.Sscan(name, &i); err != nil || i >= n {
				continue
			}
			mu.Lock()
			if at[i].IsZero() {
				at[i] = time.Now()
				if seen++; seen == n {
					close(donec)
				}
			}
			mu.Unlock()
		}
	}()
	return func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), at...)
	}, donec
}

// saveURL writes what GET url answers to path.
func saveURL(b *testing.B, client *http.Client, url, path string) {
	resp, err := client.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
