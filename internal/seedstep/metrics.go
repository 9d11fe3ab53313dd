package seedstep

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
)

// Durations is mkube's own histogram, beyond Kubernetes, for learners:
// mkube_pod_step_duration_seconds{step}, the time from a pod's creation to
// each step of the flow, observed where a component logs that step. Each
// component registers it in its own registry and observes only its own
// steps (the API server 3, 4, 7, 8, 10, 11 and 13; the scheduler 9 and 10),
// so summing the components' series by step draws the whole flow.
//
// A pod's creationTimestamp is kept to the second, as in Kubernetes, so an
// observation may read up to a second short; it never reads below 0.
type Durations struct {
	hist  *prometheus.HistogramVec
	clock clock.PassiveClock
}

// NewDurations registers the histogram in reg; clk is the component's
// clock (nil: the real one).
func NewDurations(reg prometheus.Registerer, clk clock.PassiveClock) *Durations {
	if clk == nil {
		clk = clock.RealClock{}
	}
	d := &Durations{clock: clk, hist: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mkube_pod_step_duration_seconds",
		Help: "Time from a pod's creation to each step of seed 000's pod creation flow that this component carries out (step=N as in its log).",
		// From the steps that take milliseconds to an image pull.
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{Key})}
	reg.MustRegister(d.hist)
	return d
}

// Observe records that a pod created at created reached step now. A nil
// Durations, or a pod without a creation time, records nothing.
func (d *Durations) Observe(step int, created time.Time) {
	if d == nil || created.IsZero() {
		return
	}
	d.hist.WithLabelValues(strconv.Itoa(step)).Observe(max(d.clock.Since(created).Seconds(), 0))
}
