package metrics

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/kubelet/stats"
)

// The paths of a node's stats and metrics, as a kubelet serves them.
const (
	PathStatsSummary    = "/stats/summary"
	PathMetrics         = "/metrics"
	PathMetricsResource = "/metrics/resource"
	PathMetricsCadvisor = "/metrics/cadvisor"
	PathMetricsProbes   = "/metrics/probes"
)

// Paths are every path Endpoints serves.
var Paths = []string{PathStatsSummary, PathMetrics, PathMetricsResource, PathMetricsCadvisor, PathMetricsProbes}

// Options are what one node's Endpoints read.
type Options struct {
	Node string
	// MachineID is the node's status.nodeInfo.machineID (cAdvisor's
	// machine_* labels).
	MachineID string
	Stats     stats.Options
	// RuntimeOps are the process's CRI calls, and Process its Go and
	// process collectors (ProcessCollectors), shared by its nodes: one
	// instance of each serves every node's /metrics.
	RuntimeOps *RuntimeOperations
	Process    []prometheus.Collector
	Clock      clock.PassiveClock
}

// Endpoints are one node's stats and metrics: each path its own
// registry, so that a process running many nodes (and other components)
// never mixes their series.
type Endpoints struct {
	Kubelet  *Kubelet
	Probes   *Probes
	handlers map[string]http.Handler
}

// NewEndpoints returns the node's endpoints.
func NewEndpoints(o Options) *Endpoints {
	provider := stats.NewProvider(o.Stats)
	probes, own := prometheus.NewRegistry(), prometheus.NewRegistry()
	own.MustRegister(o.Process...)
	if o.RuntimeOps != nil {
		own.MustRegister(unchecked{o.RuntimeOps})
	}
	e := &Endpoints{Kubelet: NewKubelet(own, o.Node, o.Stats.Runtime, o.Stats.Selector, o.Clock), Probes: NewProbes(probes)}
	// The registries of what is read at each scrape, and the handlers,
	// are made at the first request: a fleet of 5,000 nodes, most never
	// scraped, would otherwise hold 60 MB of them.
	e.handlers = map[string]http.Handler{
		PathStatsSummary: http.HandlerFunc(provider.ServeSummary),
		PathMetrics:      lazy(func() http.Handler { return handlerFor(own) }),
		PathMetricsResource: lazy(func() http.Handler {
			return handlerFor(registryOf(ResourceCollector{Source: provider}))
		}),
		PathMetricsCadvisor: lazy(func() http.Handler {
			return handlerFor(registryOf(CadvisorCollector{Source: provider, MachineID: o.MachineID}))
		}),
		PathMetricsProbes: lazy(func() http.Handler { return handlerFor(probes) }),
	}
	return e
}

// lazyHandler is a handler made when it is first asked for.
type lazyHandler struct {
	once  sync.Once
	make  func() http.Handler
	ready http.Handler
}

func lazy(make func() http.Handler) *lazyHandler { return &lazyHandler{make: make} }

func (l *lazyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.once.Do(func() { l.ready = l.make() })
	l.ready.ServeHTTP(w, r)
}

// Handler serves path, one of Paths; nil for another.
func (e *Endpoints) Handler(path string) http.Handler { return e.handlers[path] }

// ProcessCollectors are Go's and the process's series (go_*,
// process_*), which every component's /metrics has: a process's nodes
// share one of each. They are unchecked (they describe nothing): a
// registry keeps the descriptions of what it checks, which for Go's
// collector, in each of 5,000 nodes' registries, came to 90 MB.
func ProcessCollectors() []prometheus.Collector {
	return []prometheus.Collector{unchecked{collectors.NewGoCollector()}, unchecked{collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}}
}

// unchecked is a collector its registries do not check for clashes.
type unchecked struct{ prometheus.Collector }

func (unchecked) Describe(chan<- *prometheus.Desc) {}

func handlerFor(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// registryOf is a registry of c alone.
func registryOf(c prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return reg
}
