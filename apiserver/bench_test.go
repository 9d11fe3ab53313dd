package apiserver

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkWatchFanout100 creates pods through the HTTP API while 100
// HTTP watchers stream them, and reports the events delivered per second
// and the delay from a create's response to its event at each watcher
// (p50, p99) — the figures of notes/perf-anchors.md.
func BenchmarkWatchFanout100(b *testing.B) {
	benchmarkWatchFanout(b, 100)
}

func benchmarkWatchFanout(b *testing.B, watchers int) {
	s := newTestServer(&testing.T{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	s.do("GET", "/api/v1/namespaces/default/pods", "", "", &list)

	// created[name] is when the create was acknowledged.
	var mu sync.Mutex
	created := map[string]time.Time{}
	var delays []time.Duration
	var wg sync.WaitGroup
	transport := &http.Transport{MaxIdleConnsPerHost: watchers}
	for range watchers {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/api/v1/namespaces/default/pods?watch=true&resourceVersion="+list.Metadata.ResourceVersion, nil)
		resp, err := transport.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			for got := 0; got < b.N && sc.Scan(); got++ {
				now := time.Now()
				line := sc.Text()
				i := strings.Index(line, `"name":"`)
				name := line[i+8 : i+8+strings.IndexByte(line[i+8:], '"')]
				mu.Lock()
				for created[name].IsZero() {
					mu.Unlock() // the event can beat the create's response
					time.Sleep(time.Microsecond)
					mu.Lock()
				}
				delays = append(delays, max(0, now.Sub(created[name]))) // 0: the event beat the response
				mu.Unlock()
			}
		}()
	}
	body := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","image":"nginx:1.25"}]}}`
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		name := fmt.Sprintf("p%d", i)
		req, _ := http.NewRequest("POST", s.url+"/api/v1/namespaces/default/pods", strings.NewReader(fmt.Sprintf(body, name)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 201 {
			b.Fatalf("create: %v %v", err, resp)
		}
		resp.Body.Close()
		mu.Lock()
		created[name] = time.Now()
		mu.Unlock()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	b.ReportMetric(float64(b.N*watchers)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
	if len(delays) > 0 {
		b.ReportMetric(float64(delays[len(delays)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(delays[len(delays)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkWatchFanout1000: the same with 1000 watchers.
func BenchmarkWatchFanout1000(b *testing.B) {
	benchmarkWatchFanout(b, 1000)
}
