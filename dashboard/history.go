package dashboard

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Retention is how long the numbers view remembers: the last hour, as
// the seed's §十三 Grafana board shows by default. At one sample every
// SampleInterval that is 240 points a series.
const Retention = time.Hour

// SampleInterval is metrics-server's own resolution (its --metric-resolution
// default, 15s), and Prometheus' default scrape_interval: sampling faster
// would only repeat metrics-server's numbers. Tests ask for less
// (--sample-interval) rather than wait.
const SampleInterval = 15 * time.Second

// Point is one sample.
type Point struct {
	T time.Time `json:"t"`
	V float64   `json:"v"`
}

// Sample is one round of samples, by series name: "node/node01/cpu"
// (millicores), "node/node01/memory" (MiB), "pod/default/web-1/cpu",
// "hpa/default/web/replicas" and ".../desired", ".../target"
// (the metric's target, a percentage), "cluster/pending" (pods Pending)
// from apiSource; "scheduler/pending/active", "scheduler/attempts/scheduled"
// (per second), "controller-manager/workqueue/deployment/depth" and
// ".../adds" (per second) from the components' /metrics (components.go).
type Sample struct {
	T      time.Time          `json:"t"`
	Values map[string]float64 `json:"values"`
	// Errors are what could not be read this round, such as the metrics
	// API when metrics-server is not installed, in the API's words.
	Errors []string `json:"errors,omitempty"`
	// Scrapes is how each component's /metrics answered this round, by
	// component ("scheduler", "controller-manager"): configured or not,
	// and its error.
	Scrapes map[string]ScrapeStatus `json:"scrapes,omitempty"`
}

// Source is one thing a round of samples reads: the metrics API and the
// dashboard's caches (apiSource), or a component's /metrics (Scraper).
// History calls Sample from its one goroutine, so that a source may keep
// what it read last round (a counter's previous value) without a lock.
type Source interface {
	// Sample adds this round's values to s.Values, and what could not
	// be read to s.Errors or s.Scrapes.
	Sample(ctx context.Context, s *Sample)
}

// History samples its sources every interval and keeps the last
// Retention of samples in memory.
type History struct {
	sources  []Source
	interval time.Duration
	hub      *Broadcast[Sample]
	clock    clock.WithTicker
	log      *slog.Logger

	mu      sync.Mutex
	samples []Sample // oldest first, none older than Retention
}

// NewHistory returns an empty history of sources, sampled every
// interval (SampleInterval if 0); Run fills it.
func NewHistory(clk clock.WithTicker, interval time.Duration, log *slog.Logger, sources ...Source) *History {
	if interval <= 0 {
		interval = SampleInterval
	}
	return &History{sources: sources, interval: interval, hub: NewBroadcast[Sample](log, "samples"), clock: clk, log: log}
}

// Run samples until ctx ends. It blocks.
func (h *History) Run(ctx context.Context) {
	t := h.clock.NewTicker(h.interval)
	defer t.Stop()
	for {
		h.add(h.sample(ctx))
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Samples is a copy of the history; empty, not nil, before the first
// round, so that a snapshot's samples are a JSON list the page can read.
func (h *History) Samples() []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Sample{}, h.samples...)
}

// Subscribe and Unsubscribe give the SSE handler each new sample.
func (h *History) Subscribe() chan Sample    { return h.hub.Subscribe() }
func (h *History) Unsubscribe(c chan Sample) { h.hub.Unsubscribe(c) }

func (h *History) add(s Sample) {
	h.mu.Lock()
	h.samples = append(h.samples, s)
	cut := 0
	for cut < len(h.samples) && s.T.Sub(h.samples[cut].T) > Retention {
		cut++
	}
	h.samples = h.samples[cut:]
	h.mu.Unlock()
	h.hub.Publish(s)
}

// sample is one round: every source, each given at most the interval,
// so that a slow one delays the next round by no more than that.
func (h *History) sample(ctx context.Context) Sample {
	s := Sample{T: h.clock.Now(), Values: map[string]float64{}, Scrapes: map[string]ScrapeStatus{}}
	for _, src := range h.sources {
		sctx, cancel := context.WithTimeout(ctx, h.interval)
		src.Sample(sctx, &s)
		cancel()
	}
	h.log.Debug("sampled", "series", len(s.Values), "errors", len(s.Errors))
	return s
}
