package metrics

import (
	"net/http"

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
	// RuntimeOps are the process's CRI calls, shared by its nodes.
	RuntimeOps *RuntimeOperations
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
	resource, cadvisor, probes, own := prometheus.NewRegistry(), prometheus.NewRegistry(), prometheus.NewRegistry(), prometheus.NewRegistry()
	resource.MustRegister(ResourceCollector{Source: provider})
	cadvisor.MustRegister(CadvisorCollector{Source: provider, MachineID: o.MachineID})
	own.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.RuntimeOps != nil {
		own.MustRegister(o.RuntimeOps)
	}
	e := &Endpoints{Kubelet: NewKubelet(own, o.Node, o.Stats.Runtime, o.Stats.Selector, o.Clock), Probes: NewProbes(probes)}
	e.handlers = map[string]http.Handler{
		PathStatsSummary:    http.HandlerFunc(provider.ServeSummary),
		PathMetrics:         handlerFor(own),
		PathMetricsResource: handlerFor(resource),
		PathMetricsCadvisor: handlerFor(cadvisor),
		PathMetricsProbes:   handlerFor(probes),
	}
	return e
}

// Handler serves path, one of Paths; nil for another.
func (e *Endpoints) Handler(path string) http.Handler { return e.handlers[path] }

func handlerFor(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
