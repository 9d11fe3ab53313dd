package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/kubelet/prober"
)

// Probes are a node's /metrics/probes (upstream's pkg/kubelet/prober
// metrics): every probe run counted by its result, and how long it took.
type Probes struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewProbes returns the probe metrics, registered in reg.
func NewProbes(reg prometheus.Registerer) *Probes {
	p := &Probes{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "prober", Name: "probe_total",
			Help: "Cumulative number of a liveness, readiness or startup probe for a container by result."},
			[]string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "prober", Name: "probe_duration_seconds",
			Help: "Duration in seconds for a probe response.", Buckets: prometheus.DefBuckets},
			[]string{"probe_type", "container", "pod", "namespace"}),
	}
	reg.MustRegister(p.total, p.duration)
	return p
}

// resultLabel is the kubelet's word for a probe's result.
func resultLabel(r prober.Result) string {
	switch r {
	case prober.Success:
		return "successful"
	case prober.Failure:
		return "failed"
	}
	return "unknown"
}

// Runner wraps a prober.Runner, counting and timing each run on clk.
func (p *Probes) Runner(r prober.Runner, clk clock.PassiveClock) prober.Runner {
	return probeRunner{r: r, p: p, clock: clk}
}

type probeRunner struct {
	r     prober.Runner
	p     *Probes
	clock clock.PassiveClock
}

func (pr probeRunner) Run(ctx context.Context, t prober.Target) (prober.Result, string) {
	start := pr.clock.Now()
	result, output := pr.r.Run(ctx, t)
	kind, pod := string(t.Kind), t.Pod
	pr.p.total.WithLabelValues(kind, resultLabel(result), t.Container.Name, pod.Name, pod.Namespace, string(pod.UID)).Inc()
	pr.p.duration.WithLabelValues(kind, t.Container.Name, pod.Name, pod.Namespace).Observe(pr.clock.Since(start).Seconds())
	return result, output
}
