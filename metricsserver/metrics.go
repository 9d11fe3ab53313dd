package metricsserver

import (
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serverMetrics are the server's own /metrics, with metrics-server
// v0.8.0's names, labels and buckets (its pkg/scraper, pkg/server and
// pkg/storage), so that its dashboards and alerts work unchanged: each
// kubelet request, each scrape round, and the points kept. They live in a
// registry of the server's own, not the process's default one, so that
// several servers in one process (tests) do not clash.
type serverMetrics struct {
	registry        *prometheus.Registry
	requestDuration *prometheus.HistogramVec
	requestTotal    *prometheus.CounterVec
	lastRequestTime *prometheus.GaugeVec
	tickDuration    prometheus.Histogram
	pointsStored    *prometheus.GaugeVec
}

func newServerMetrics(resolution time.Duration) *serverMetrics {
	m := &serverMetrics{registry: prometheus.NewRegistry(),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "metrics_server", Subsystem: "kubelet",
			Name: "request_duration_seconds", Help: "Duration of requests to Kubelet API in seconds", Buckets: prometheus.DefBuckets},
			[]string{"node"}),
		requestTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "metrics_server", Subsystem: "kubelet",
			Name: "request_total", Help: "Number of requests sent to Kubelet API"}, []string{"success"}),
		lastRequestTime: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "metrics_server", Subsystem: "kubelet",
			Name: "last_request_time_seconds", Help: "Time of last request performed to Kubelet API since unix epoch in seconds"},
			[]string{"node"}),
		tickDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "metrics_server", Subsystem: "manager",
			Name: "tick_duration_seconds", Help: "The total time spent collecting and storing metrics in seconds.",
			Buckets: bucketsForScrapeDuration(resolution)}),
		pointsStored: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "metrics_server", Subsystem: "storage",
			Name: "points", Help: "Number of metrics points stored."}, []string{"type"}),
	}
	m.registry.MustRegister(m.requestDuration, m.requestTotal, m.lastRequestTime, m.tickDuration, m.pointsStored,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observeRequest counts one request to node's kubelet, sent at start and
// answered (or failed, err) at end. As metrics-server, the last request's
// time is whole seconds.
func (m *serverMetrics) observeRequest(node string, start, end time.Time, err error) {
	m.requestDuration.WithLabelValues(node).Observe(end.Sub(start).Seconds())
	m.lastRequestTime.WithLabelValues(node).Set(float64(end.Unix()))
	m.requestTotal.WithLabelValues(map[bool]string{true: "true", false: "false"}[err == nil]).Inc()
}

// observeStored sets the points that can be served: nodes and containers
// with two points, a rate.
func (m *serverMetrics) observeStored(nodes, containers int) {
	m.pointsStored.WithLabelValues("node").Set(float64(nodes))
	m.pointsStored.WithLabelValues("container").Set(float64(containers))
}

func (m *serverMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// bucketsForScrapeDuration are Prometheus' default buckets with the
// resolution among them, as metrics-server's tick histogram has them, so
// a round that takes as long as the resolution shows: beyond the last
// default bucket (10 s), halfway to it, it, 1.5 and 2 times it; below,
// it alone, unless a default bucket is within the first bucket of it.
func bucketsForScrapeDuration(resolution time.Duration) []float64 {
	buckets := slices.Clone(prometheus.DefBuckets)
	top, s := buckets[len(buckets)-1], resolution.Seconds()
	if s > top {
		return append(buckets, top+(s-top)/2, s, s*1.5, s*2)
	}
	for _, b := range buckets {
		if math.Abs(b-s) < buckets[0] {
			return buckets
		}
	}
	i, _ := slices.BinarySearch(buckets, s)
	return slices.Insert(buckets, i, s)
}
