package apiserver

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/store"
)

// requestBuckets are kube-apiserver's buckets of
// apiserver_request_duration_seconds and etcd_request_duration_seconds.
var requestBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// serverMetrics are the API server's series, as
// k8s.io/apiserver/pkg/endpoints/metrics and storage/etcd3/metrics name
// them, in the server's own registry, served at /metrics.
type serverMetrics struct {
	registry    *prometheus.Registry
	requests    *prometheus.CounterVec
	durations   *prometheus.HistogramVec
	inflight    *prometheus.GaugeVec
	longRunning *prometheus.GaugeVec
	etcd        *prometheus.HistogramVec
	watchEvents *prometheus.CounterVec
	// steps observes the seed steps the API server logs (3, 4, 7, 8, 10,
	// 11, 13) for pods.
	steps *seedstep.Durations
	slis  *healthSLIs
}

func newServerMetrics(s *Server, clk clock.PassiveClock) *serverMetrics {
	reg := prometheus.NewRegistry()
	labels := []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}
	m := &serverMetrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code."},
			append(labels, "code")),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: requestBuckets}, labels),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_current_inflight_requests",
			Help: "Maximal number of currently used inflight request limit of this apiserver per request kind in last second."}, []string{"request_kind"}),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_longrunning_requests",
			Help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way."},
			[]string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
		etcd: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "etcd_request_duration_seconds",
			Help: "Etcd request latency in seconds for each operation and object type.", Buckets: requestBuckets}, []string{"operation", "type"}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_watch_events_total",
			Help: "Number of events sent in watch clients"}, []string{"group", "version", "kind"}),
		steps: seedstep.NewDurations(reg, clk),
		slis:  newHealthSLIs(),
	}
	// Both kinds exist from the start, as kube-apiserver shows them.
	m.inflight.WithLabelValues("readOnly")
	m.inflight.WithLabelValues("mutating")
	reg.MustRegister(m.requests, m.durations, m.inflight, m.longRunning, m.etcd, m.watchEvents,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		storageObjects{s: s, desc: prometheus.NewDesc("apiserver_storage_objects",
			"Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.", []string{"resource"}, nil)})
	return m
}

// etcdTimer starts timing one etcd request of operation (get, list,
// create, update, delete) on resource; call the result when it returns.
func (m *serverMetrics) etcdTimer(operation string, res *Resource, now func() time.Time) func() {
	if m == nil { // a Storage made outside a Server (tests)
		return func() {}
	}
	began := now()
	return func() { m.etcd.WithLabelValues(operation, groupResource(res)).Observe(now().Sub(began).Seconds()) }
}

// observeStep records a seed step the API server logged, for a pod.
func (m *serverMetrics) observeStep(step int, obj runtime.Object) {
	if pod, ok := obj.(*corev1.Pod); ok && m != nil {
		m.steps.Observe(step, pod.CreationTimestamp.Time)
	}
}

// groupResource is a resource as Kubernetes' metrics label it: "pods",
// "deployments.apps".
func groupResource(res *Resource) string {
	if res.GroupVersion.Group == "" {
		return res.Name
	}
	return res.Name + "." + res.GroupVersion.Group
}

// storageObjects counts each resource's objects in etcd when scraped
// (kube-apiserver counts them every minute; a count-only read per
// resource is cheap enough for a scrape every few seconds).
type storageObjects struct {
	s    *Server
	desc *prometheus.Desc
}

func (c storageObjects) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c storageObjects) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	seen := map[string]bool{} // a resource served in several versions is stored once
	for _, res := range c.s.resources() {
		label := groupResource(res)
		if seen[label] || c.s.storageOf(res) == nil {
			continue
		}
		seen[label] = true
		n := float64(-1)
		if l, err := c.s.store.List(ctx, store.Prefix(res.storageName(), ""), store.ListOptions{Limit: 1}); err == nil {
			n = float64(l.Count)
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, n, label)
	}
}
