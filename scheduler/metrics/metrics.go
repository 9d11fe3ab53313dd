package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The results of a scheduling attempt, as kube-scheduler labels them.
const (
	Scheduled     = "scheduled"
	Unschedulable = "unschedulable"
	Error         = "error"
)

// Metrics are kube-scheduler's series, in the scheduler's own registry. A
// nil *Metrics records nothing (tests that do not look).
type Metrics struct {
	reg              prometheus.Registerer
	attempts         *prometheus.CounterVec
	attemptDuration  *prometheus.HistogramVec
	podAttempts      prometheus.Histogram
	preemptionTotal  prometheus.Counter
	preemptionVictim prometheus.Histogram
	extensionPoint   *prometheus.HistogramVec
}

// New registers the series in reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		reg: reg,
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "scheduler", Name: "schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem."},
			[]string{"result", "profile"}),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "scheduler", Name: "scheduling_attempt_duration_seconds",
			Help:    "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}, []string{"result", "profile"}),
		podAttempts: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "scheduler", Name: "pod_scheduling_attempts",
			Help:    "Number of attempts to successfully schedule a pod.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 5)}),
		preemptionTotal: prometheus.NewCounter(prometheus.CounterOpts{Subsystem: "scheduler", Name: "preemption_attempts_total",
			Help: "Total preemption attempts in the cluster till now"}),
		preemptionVictim: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "scheduler", Name: "preemption_victims",
			Help: "Number of selected preemption victims", Buckets: prometheus.ExponentialBuckets(1, 2, 7)}),
		extensionPoint: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "scheduler", Name: "framework_extension_point_duration_seconds",
			Help:    "Latency for running all plugins of a specific extension point.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12)}, []string{"extension_point", "status", "profile"}),
	}
	reg.MustRegister(m.attempts, m.attemptDuration, m.podAttempts, m.preemptionTotal, m.preemptionVictim, m.extensionPoint)
	return m
}

// Attempt records one scheduling attempt of profile: its result and how
// long it took, from the pod leaving the queue to its binding (or failure).
func (m *Metrics) Attempt(profile, result string, took time.Duration) {
	if m == nil {
		return
	}
	m.attempts.WithLabelValues(result, profile).Inc()
	m.attemptDuration.WithLabelValues(result, profile).Observe(took.Seconds())
}

// ExtensionPoint records one run of all the plugins of an extension point
// (PreFilter, Filter over the nodes, PreScore, Score, Reserve, PreBind,
// Bind) and the status it ended with (Success, Unschedulable, Error...).
func (m *Metrics) ExtensionPoint(profile, point, status string, took time.Duration) {
	if m != nil {
		m.extensionPoint.WithLabelValues(point, status, profile).Observe(took.Seconds())
	}
}

// PodScheduled records how many attempts a pod took to be bound.
func (m *Metrics) PodScheduled(attempts int) {
	if m != nil {
		m.podAttempts.Observe(float64(attempts))
	}
}

// Preemption records one preemption attempt and, when it found a
// candidate, its number of victims.
func (m *Metrics) Preemption(victims int) {
	if m == nil {
		return
	}
	m.preemptionTotal.Inc()
	if victims > 0 {
		m.preemptionVictim.Observe(float64(victims))
	}
}

// PendingCounts are the pods waiting in each of the scheduling queue's
// parts, the queue label of scheduler_pending_pods.
type PendingCounts struct{ Active, Backoff, Unschedulable, Gated int }

// WatchPending registers scheduler_pending_pods{queue}, read from the
// queue at each scrape.
func (m *Metrics) WatchPending(read func() PendingCounts) {
	if m == nil {
		return
	}
	m.reg.MustRegister(pendingCollector{read: read, desc: prometheus.NewDesc("scheduler_pending_pods",
		"Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
		[]string{"queue"}, nil)})
}

type pendingCollector struct {
	read func() PendingCounts
	desc *prometheus.Desc
}

func (c pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.read()
	for _, q := range []struct {
		name  string
		count int
	}{{"active", n.Active}, {"backoff", n.Backoff}, {"unschedulable", n.Unschedulable}, {"gated", n.Gated}} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(q.count), q.name)
	}
}
