package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// BenchmarkWatchFanout100 creates pods through the HTTP API while 100
// HTTP watchers stream them, and reports the events delivered per second
// and the delay from a create's response to its event at each watcher
// (p50, p99) — the figures of notes/perf-anchors.md.
func BenchmarkWatchFanout100(b *testing.B) {
	benchmarkWatchFanout(b, 100)
}

func benchmarkWatchFanout(b *testing.B, watchers int) {
	s := testserver.StartServer(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	s.Do("GET", "/api/v1/namespaces/default/pods", "", "", &list)

	// created[name] is when the create was acknowledged; each watcher
	// notes when every event arrived, in a slice of its own, and the
	// delays are computed at the end, so the measuring costs the server
	// (which shares these two cores) no locks and no waiting.
	var mu sync.Mutex
	created := map[string]time.Time{}
	arrivals := make([][]arrival, watchers)
	var wg sync.WaitGroup
	transport := &http.Transport{MaxIdleConnsPerHost: watchers}
	for w := range watchers {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/v1/namespaces/default/pods?watch=true&resourceVersion="+list.Metadata.ResourceVersion, nil)
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
			got := make([]arrival, 0, b.N)
			for len(got) < b.N && sc.Scan() {
				now := time.Now()
				line := sc.Bytes()
				i := bytes.Index(line, []byte(`"name":"`)) + len(`"name":"`)
				got = append(got, arrival{name: string(line[i : i+bytes.IndexByte(line[i:], '"')]), at: now})
			}
			arrivals[w] = got
		}()
	}
	body := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","image":"nginx:1.25"}]}}`
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		name := fmt.Sprintf("p%d", i)
		req, _ := http.NewRequest("POST", s.URL+"/api/v1/namespaces/default/pods", strings.NewReader(fmt.Sprintf(body, name)))
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
	var delays []time.Duration
	for _, got := range arrivals {
		for _, a := range got {
			delays = append(delays, max(0, a.at.Sub(created[a.name]))) // 0: the event beat the response
		}
	}
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

// arrival: when one watcher received the event of one pod.
type arrival struct {
	name string
	at   time.Time
}
