package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// BenchmarkSchedulingBasic is shaped like Kubernetes' scheduler_perf
// SchedulingBasic: N Node objects (no kubelets), then pods with small
// requests created through the real API server by 16 concurrent clients,
// while the real scheduler binds them. It reports pods/s from the first
// create to the last binding, the create→bound latency (p50, p99), and
// the create rate; the scheduler is up and has bound a warm-up pod before
// the pods come. Each size runs once whatever -benchtime says:
//
//	go test -run '^$' -bench SchedulingBasic -benchtime 1x ./e2e/
//
// MKUBE_BENCH_CPUPROFILE=FILE saves 5 s of the API server's CPU profile
// from the start of the creates.
//
// MKUBE_BENCH_PODS overrides the 10,000 pods (e.g. for a quick look).
//
// MKUBE_BENCH_STORAGE_MEDIA_TYPE=application/vnd.kubernetes.protobuf
// runs the API server with that --storage-media-type (default JSON).
//
// MKUBE_BENCH_SECURE=1 runs it on the secure port, as the Kubernetes
// anchor ran (Node,RBAC): the scheduler on its kubeconfig, the
// benchmark's clients as a user RBAC allows, over HTTP/2 with client-go's
// transport (bench_secure_test.go).
func BenchmarkSchedulingBasic(b *testing.B) {
	pods := 10000
	if v := envInt("MKUBE_BENCH_PODS"); v > 0 {
		pods = v
	}
	for _, nodes := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("%dNodes_%dPods", nodes, pods), func(b *testing.B) {
			for range b.N {
				schedulingBasic(b, nodes, pods, false)
			}
		})
	}
}

// BenchmarkSchedulerBacklog is the perf anchors' other figure: 3000 pods
// created while no scheduler runs, then the scheduler starts and drains the
// backlog; pods/s counts from its start to the last binding.
func BenchmarkSchedulerBacklog(b *testing.B) {
	for _, nodes := range []int{100, 1000} {
		b.Run(fmt.Sprintf("%dNodes_3000Pods", nodes), func(b *testing.B) {
			for range b.N {
				schedulingBasic(b, nodes, 3000, true)
			}
		})
	}
}

const benchClients = 16

// schedulingBasic runs one measurement; with backlog, the scheduler starts
// only once every pod exists.
func schedulingBasic(b *testing.B, nodes, pods int, backlog bool) {
	c := &cluster{t: b, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(b)), logs: map[string]string{}, dir: b.TempDir()}
	apiserverFlags := []string{"--log-level", "warn"}
	if mediaType := os.Getenv("MKUBE_BENCH_STORAGE_MEDIA_TYPE"); mediaType != "" {
		apiserverFlags = append(apiserverFlags, "--storage-media-type", mediaType)
	}
	c.securePort = c.startAPIServer(filepath.Join(c.dir, "etcd"), apiserverFlags...)
	c.waitReady()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients * 2}}
	watcher, api, schedulerFlags := client, c.URL, []string{"--server", c.URL}
	if os.Getenv("MKUBE_BENCH_SECURE") == "1" { // bench_secure_test.go
		client, watcher, api = benchSecureClients(b, c)
		schedulerFlags = []string{"--kubeconfig", filepath.Join(c.certDir(), "scheduler.kubeconfig")}
	}

	// The nodes: big enough that only the pod count limits them.
	parallel(nodes, func(i int) {
		node := fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-%d","labels":{"kubernetes.io/hostname":"node-%d"}},
		"status":{"capacity":{"cpu":"32","memory":"256Gi","pods":"110"},"allocatable":{"cpu":"32","memory":"256Gi","pods":"110"},
		"conditions":[{"type":"Ready","status":"True"}]}}`, i, i)
		post(b, client, api+"/api/v1/nodes", node)
	})
	if !backlog {
		// As in scheduler_perf, the scheduler is up before the pods come:
		// one pod that it binds shows that it has listed everything and
		// is scheduling, so its start-up is not counted as pod latency.
		c.start("scheduler", append(schedulerFlags, "--log-level", "warn")...)
		post(b, client, api+"/api/v1/namespaces/default/pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"warmup"},
		"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}}`)
		testserver.EventuallyWithin(b, time.Minute, "the scheduler binds the warm-up pod", func() (bool, string) {
			var warm struct{ Spec struct{ NodeName string } }
			getJSON(b, client, api+"/api/v1/namespaces/default/pods/warmup", &warm)
			return warm.Spec.NodeName != "", "not bound yet"
		})
	}

	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	getJSON(b, client, api+"/api/v1/pods", &list)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	created := make(map[string]time.Time, pods)
	bound := make(map[string]time.Time, pods)
	allBound := make(chan struct{})
	go func() { // one watch records when each pod got its node
		req, _ := http.NewRequestWithContext(ctx, "GET", api+"/api/v1/pods?watch=true&resourceVersion="+list.Metadata.ResourceVersion, nil)
		resp, err := watcher.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		for {
			var ev struct {
				Object struct {
					Metadata struct{ Name string }
					Spec     struct{ NodeName string }
				}
			}
			if dec.Decode(&ev) != nil {
				return
			}
			if ev.Object.Spec.NodeName == "" || !strings.HasPrefix(ev.Object.Metadata.Name, "pod-") {
				continue
			}
			mu.Lock()
			if _, seen := bound[ev.Object.Metadata.Name]; !seen {
				bound[ev.Object.Metadata.Name] = time.Now()
				if len(bound) == pods {
					close(allBound)
				}
			}
			mu.Unlock()
		}
	}()

	if path := os.Getenv("MKUBE_BENCH_CPUPROFILE"); path != "" {
		go fetchProfile(ctx, http.DefaultClient, c.URL+"/debug/pprof/profile?seconds=5", path) // the API server's CPU during the burst, from the plain port
	}
	start := time.Now()
	var createDone atomic.Int64
	parallel(pods, func(i int) {
		name := fmt.Sprintf("pod-%d", i)
		pod := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",
		"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]}}`, name)
		sent := time.Now()
		post(b, client, api+"/api/v1/namespaces/default/pods", pod)
		mu.Lock()
		created[name] = sent
		mu.Unlock()
		createDone.Store(time.Since(start).Nanoseconds())
	})
	if backlog {
		start = time.Now()
		c.start("scheduler", append(schedulerFlags, "--log-level", "warn")...)
	}
	select {
	case <-allBound:
	case <-time.After(10 * time.Minute):
		b.Fatalf("only %d of %d pods bound", len(bound), pods)
	}
	elapsed := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	var lat []time.Duration
	var last time.Time
	for name, t := range bound {
		lat = append(lat, t.Sub(created[name]))
		if t.After(last) {
			last = t
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(pods)/elapsed.Seconds(), "pods/s")
	b.ReportMetric(float64(pods)/time.Duration(createDone.Load()).Seconds(), "creates/s")
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Milliseconds()), "p99-ms")
	for _, name := range []string{"apiserver", "scheduler"} {
		rss, cpu := procUsage(c.procs[name].Pid)
		b.ReportMetric(rss, name+"-RSS-MiB")
		b.ReportMetric(cpu, name+"-CPU-s")
	}
}

// procUsage reads a process's resident memory (MiB) and CPU time so far
// (user+system seconds) from /proc, as the perf anchors report them.
func procUsage(pid int) (rssMiB, cpuSeconds float64) {
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmRSS:") {
				var kb float64
				fmt.Sscanf(strings.TrimPrefix(line, "VmRSS:"), "%f", &kb)
				rssMiB = kb / 1024
			}
		}
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// Fields after the ")" that ends the command name: utime is the
		// 12th, stime the 13th, in clock ticks (100 per second on Linux).
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 12 {
			ut, _ := strconv.ParseFloat(fields[11], 64)
			st, _ := strconv.ParseFloat(fields[12], 64)
			cpuSeconds = (ut + st) / 100
		}
	}
	return rssMiB, cpuSeconds
}

// parallel runs f(0..n-1) on benchClients goroutines.
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
}

func post(b testing.TB, c *http.Client, url, body string) {
	resp, err := c.Post(url, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		b.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b.Errorf("POST %s: %d", url, resp.StatusCode)
	}
}

func getJSON(b testing.TB, c *http.Client, url string, out any) {
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(out)
}

func envInt(name string) int {
	n, _ := strconv.Atoi(os.Getenv(name))
	return n
}

// fetchProfile saves a profile from the API server's /debug/pprof (for
// MKUBE_BENCH_CPUPROFILE: where its CPU goes while pods pour in).
func fetchProfile(ctx context.Context, client *http.Client, url, path string) {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	io.Copy(f, resp.Body)
}
