package workqueue

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MetricsProvider holds client-go's workqueue_* series (as
// k8s.io/component-base/metrics/prometheus/workqueue registers them), each
// labelled name=<queue>, in one component's registry. A nil provider
// records nothing.
type MetricsProvider struct {
	depth    *prometheus.GaugeVec
	adds     *prometheus.CounterVec
	queueDur *prometheus.HistogramVec
	workDur  *prometheus.HistogramVec
	retries  *prometheus.CounterVec

	unfinishedDesc, longestDesc *prometheus.Desc
	mu                          sync.Mutex
	queues                      []inflightReader
}

// inflightReader reads, at scrape time, how long a queue's items in
// processing have run: computed when asked rather than by client-go's
// 500 ms ticker, so no goroutine runs per queue.
type inflightReader struct {
	name string
	read func() (unfinished, longest float64)
}

// durationBuckets are client-go's: 10ns to 10s, ×10.
var durationBuckets = prometheus.ExponentialBuckets(10e-9, 10, 10)

// NewMetricsProvider registers the workqueue series in reg.
func NewMetricsProvider(reg prometheus.Registerer) *MetricsProvider {
	name := []string{"name"}
	p := &MetricsProvider{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "depth",
			Help: "Current depth of workqueue"}, name),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "adds_total",
			Help: "Total number of adds handled by workqueue"}, name),
		queueDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "queue_duration_seconds",
			Help: "How long in seconds an item stays in workqueue before being requested.", Buckets: durationBuckets}, name),
		workDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: "work_duration_seconds",
			Help: "How long in seconds processing an item from workqueue takes.", Buckets: durationBuckets}, name),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: "retries_total",
			Help: "Total number of retries handled by workqueue"}, name),
		unfinishedDesc: prometheus.NewDesc("workqueue_unfinished_work_seconds",
			"How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.", name, nil),
		longestDesc: prometheus.NewDesc("workqueue_longest_running_processor_seconds",
			"How many seconds has the longest running processor for workqueue been running.", name, nil),
	}
	reg.MustRegister(p.depth, p.adds, p.queueDur, p.workDur, p.retries, p)
	return p
}

// Describe and Collect make the provider the collector of the two
// in-flight gauges.
func (p *MetricsProvider) Describe(ch chan<- *prometheus.Desc) {
	ch <- p.unfinishedDesc
	ch <- p.longestDesc
}

func (p *MetricsProvider) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	queues := append([]inflightReader(nil), p.queues...)
	p.mu.Unlock()
	// Two queues of one name (a component that builds a controller
	// twice) make one series each: a registry refuses duplicates.
	type sums struct{ unfinished, longest float64 }
	byName := map[string]*sums{}
	var names []string
	for _, q := range queues {
		unfinished, longest := q.read()
		s := byName[q.name]
		if s == nil {
			s = &sums{}
			byName[q.name] = s
			names = append(names, q.name)
		}
		s.unfinished += unfinished
		s.longest = max(s.longest, longest)
	}
	for _, name := range names {
		s := byName[name]
		ch <- prometheus.MustNewConstMetric(p.unfinishedDesc, prometheus.GaugeValue, s.unfinished, name)
		ch <- prometheus.MustNewConstMetric(p.longestDesc, prometheus.GaugeValue, s.longest, name)
	}
}

// queueMetrics are one queue's series, and when each waiting item was
// added and each processed item taken. Guarded by the queue's mu.
type queueMetrics[T comparable] struct {
	depth             prometheus.Gauge
	adds, retries     prometheus.Counter
	queueDur, workDur prometheus.Observer
	addedAt           map[T]time.Time
	startedAt         map[T]time.Time
}

// NewNamed is New with the workqueue_* series of p labelled name=name (a
// nil p records none), as client-go's NewRateLimitingQueueWithConfig
// with a Name.
func NewNamed[T comparable](clk clockWithDelay, name string, p *MetricsProvider) *Queue[T] {
	q := New[T](clk)
	if p == nil {
		return q
	}
	q.metrics = &queueMetrics[T]{depth: p.depth.WithLabelValues(name), adds: p.adds.WithLabelValues(name),
		retries: p.retries.WithLabelValues(name), queueDur: p.queueDur.WithLabelValues(name),
		workDur: p.workDur.WithLabelValues(name), addedAt: map[T]time.Time{}, startedAt: map[T]time.Time{}}
	p.mu.Lock()
	p.queues = append(p.queues, inflightReader{name, q.inflight})
	p.mu.Unlock()
	return q
}

// inflight is the sum and the longest of the processing times so far.
func (q *Queue[T]) inflight() (unfinished, longest float64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for _, t := range q.metrics.startedAt {
		d := now.Sub(t).Seconds()
		unfinished += d
		longest = max(longest, d)
	}
	return unfinished, longest
}

// The hooks below run under q.mu, where the queue changes.

func (m *queueMetrics[T]) added(item T, now time.Time) {
	if m == nil {
		return
	}
	m.adds.Inc()
	m.depth.Inc()
	if _, ok := m.addedAt[item]; !ok {
		m.addedAt[item] = now
	}
}

func (m *queueMetrics[T]) taken(item T, now time.Time) {
	if m == nil {
		return
	}
	m.depth.Dec()
	if t, ok := m.addedAt[item]; ok {
		m.queueDur.Observe(now.Sub(t).Seconds())
		delete(m.addedAt, item)
	}
	m.startedAt[item] = now
}

func (m *queueMetrics[T]) done(item T, now time.Time) {
	if m == nil {
		return
	}
	if t, ok := m.startedAt[item]; ok {
		m.workDur.Observe(now.Sub(t).Seconds())
		delete(m.startedAt, item)
	}
}

func (m *queueMetrics[T]) retried() {
	if m != nil {
		m.retries.Inc()
	}
}
