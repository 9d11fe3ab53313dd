// Package metrics holds kube-scheduler's Prometheus series, as
// pkg/scheduler/metrics/metrics.go names, labels and buckets them:
// scheduler_schedule_attempts_total{profile,result},
// scheduler_scheduling_attempt_duration_seconds{profile,result},
// scheduler_pod_scheduling_attempts, scheduler_preemption_attempts_total,
// scheduler_preemption_victims and scheduler_pending_pods{queue}. They
// serve seed steps 9 and 10 (the scheduler picks a node and binds): how
// often, how fast, and how many pods wait.
//
// The series live in the scheduler's own registry (cmd/scheduler serves
// it at /metrics), never in the process-wide default one, since tests run
// several components in one process.
//
//	file        what it holds
//	metrics.go  Metrics: New, Attempt, PodScheduled, Preemption, WatchPending
package metrics
