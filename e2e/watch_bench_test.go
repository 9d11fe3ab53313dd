package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// BenchmarkWatchFanoutClientGo measures watch fan-out the way the perf
// anchors measured Kubernetes, so that the two figures can stand side by
// side: the real API server binary alone (no scheduler, nothing else), N
// client-go watchers on pods in this process, each on its own TCP
// connection and decoding every event into a corev1.Pod as client-go does,
// then one sequential client that creates 1000 pods. It reports
//
//   - events/s: events delivered to all watchers / (last delivery − first create);
//   - p50-ms, p99-ms: delay of each delivery after the response to that
//     pod's create came back (negative when the event beats the response);
//   - lost: ADDED events that never arrived (the benchmark fails unless 0);
//   - server-us/event, harness-us/event: CPU time (user+system) of the API
//     server and of this process per delivered event.
//
// Both share the machine's cores, so the harness's decoding competes with
// the server, as in the anchor. Each run starts a fresh server:
//
//	go test -run '^$' -bench WatchFanoutClientGo -benchtime 1x ./e2e/
//
// The Protobuf variant sends the creates as protobuf and accepts protobuf
// (client-go's default for built-in kinds, and Kubernetes' own
// components'), so its watchers read protobuf frames and decode protobuf
// pods; the JSON variant asks for JSON only and reads JSON lines. 1000 watchers (a million decoded events) run
// only with MKUBE_BENCH_1000_WATCHERS=1.
func BenchmarkWatchFanoutClientGo(b *testing.B) {
	for _, codec := range []struct{ name, contentType string }{
		// Named, not left to client-go: since v0.3x a generated client
		// with no ContentType asks for protobuf first, so "" would
		// measure protobuf twice.
		{"JSON", "application/json"},
		{"Protobuf", "application/vnd.kubernetes.protobuf"},
	} {
		for _, watchers := range []int{100, 1000} {
			b.Run(fmt.Sprintf("%s/%dWatchers", codec.name, watchers), func(b *testing.B) {
				if watchers > 100 && os.Getenv("MKUBE_BENCH_1000_WATCHERS") == "" {
					b.Skip("set MKUBE_BENCH_1000_WATCHERS=1 to run 1000 watchers")
				}
				for range b.N {
					watchFanout(b, watchers, codec.contentType)
				}
			})
		}
	}
}

const (
	fanoutPods = 1000 // as in the anchor: "100 watchers ... received 1000 more pods"
	// deliveryTimeout bounds the wait for the last event after the last
	// create; 1000 watchers decode a million events on two shared cores.
	deliveryTimeout = 5 * time.Minute
)

// fanoutWatcher is one watch; only its goroutine writes arrived (when each
// pod's ADDED event came, as time since the run's base; 0 = not yet) and
// err, and they are read once that goroutine has returned.
type fanoutWatcher struct {
	arrived []time.Duration
	err     error
}

// watchFanout runs one measurement with a fresh API server.
func watchFanout(b *testing.B, watchers int, contentType string) {
	c := &cluster{t: b, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(b)), logs: map[string]string{}}
	c.startAPIServer(filepath.Join(b.TempDir(), "etcd"), "--log-level", "warn")
	c.waitReady()
	b.Cleanup(func() {
		if b.Failed() {
			c.dumpLogs()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends every watch

	creator := clientOnOwnConnection(b, c.URL, contentType)
	list, err := creator.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatalf("list pods: %v", err)
	}
	base := time.Now()
	ws := make([]*fanoutWatcher, watchers)
	var wg sync.WaitGroup
	for i := range ws {
		// Watch returns once the server has answered 200, so every stream
		// is open (from the list's resourceVersion) before the first create.
		w, err := clientOnOwnConnection(b, c.URL, contentType).CoreV1().Pods("default").
			Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			b.Fatalf("watch %d: %v", i, err)
		}
		fw := &fanoutWatcher{arrived: make([]time.Duration, fanoutPods)}
		ws[i] = fw
		wg.Add(1)
		go func() { // owner: this watch; ends after the last pod, on an error, or when ctx ends
			defer wg.Done()
			defer w.Stop()
			fw.err = fw.receive(w, base)
		}()
	}
	delivered := make(chan struct{}) // closed by the goroutine below once every watcher has returned
	go func() { wg.Wait(); close(delivered) }()

	// One sequential client creates the pods, noting when each create's
	// response came back.
	created := make([]time.Duration, fanoutPods)
	serverCPU0, harnessCPU0 := cpuTime(c.procs["apiserver"].Pid), cpuTime(os.Getpid())
	start := time.Since(base)
	for i := range fanoutPods {
		if _, err := creator.CoreV1().Pods("default").Create(ctx, fanoutPod(i), metav1.CreateOptions{}); err != nil {
			b.Fatalf("create pod-%d: %v", i, err)
		}
		created[i] = time.Since(base)
	}
	select {
	case <-delivered:
	case <-time.After(deliveryTimeout):
		cancel() // the watchers return; what is missing is counted as lost
		<-delivered
	}
	serverCPU, harnessCPU := cpuTime(c.procs["apiserver"].Pid)-serverCPU0, cpuTime(os.Getpid())-harnessCPU0

	var delays []time.Duration
	var last time.Duration
	lost := 0
	for i, w := range ws {
		if w.err != nil {
			b.Errorf("watcher %d: %v", i, w.err)
		}
		for pod, at := range w.arrived {
			if at == 0 {
				lost++
				continue
			}
			delays = append(delays, at-created[pod])
			last = max(last, at)
		}
	}
	if lost > 0 {
		b.Fatalf("%d of %d events lost", lost, watchers*fanoutPods)
	}
	slices.Sort(delays)
	events := float64(len(delays))
	b.ReportMetric(events/(last-start).Seconds(), "events/s")
	b.ReportMetric(float64(delays[len(delays)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(delays[len(delays)*99/100])/1e6, "p99-ms")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(serverCPU*1e6/events, "server-us/event")
	b.ReportMetric(harnessCPU*1e6/events, "harness-us/event")
}

// receive notes when each pod's ADDED event arrives, until all have come.
// A closed stream before then is not an error: the pods it missed count as
// lost.
func (fw *fanoutWatcher) receive(w watch.Interface, base time.Time) error {
	remaining := len(fw.arrived)
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return fmt.Errorf("watch error event: %v", ev.Object)
		}
		pod, ok := ev.Object.(*corev1.Pod)
		if ev.Type != watch.Added || !ok {
			continue
		}
		i, err := strconv.Atoi(strings.TrimPrefix(pod.Name, "pod-"))
		if err != nil || i < 0 || i >= len(fw.arrived) || fw.arrived[i] != 0 {
			return fmt.Errorf("unexpected ADDED %s", pod.Name)
		}
		fw.arrived[i] = time.Since(base)
		if remaining--; remaining == 0 {
			return nil
		}
	}
	return nil
}

// clientOnOwnConnection is a typed clientset with its own http.Transport,
// hence its own TCP connection: for a plain-HTTP rest.Config client-go
// would otherwise hand every clientset the shared http.DefaultTransport.
// No client-side rate limit (QPS -1), as in the anchor's harness.
func clientOnOwnConnection(b *testing.B, url, contentType string) *kubernetes.Clientset {
	cfg := &rest.Config{Host: url, QPS: -1, Transport: &http.Transport{}}
	if contentType != "" {
		cfg.ContentType = contentType
		cfg.AcceptContentTypes = contentType + ",application/json"
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

// fanoutPod is pod-i, shaped like the anchor's pods: requests, no nodeName.
func fanoutPod(i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("100m"),
				corev1.ResourceMemory: resource.MustParse("128Mi"),
			}},
		}}},
	}
}

// cpuTime is a process's user+system CPU time so far.
func cpuTime(pid int) float64 {
	_, cpu := procUsage(pid)
	return cpu
}
