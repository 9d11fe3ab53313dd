// Package metrics holds kube-scheduler's Prometheus series, as
// pkg/scheduler/metrics/metrics.go names, labels and buckets them:
// scheduler_schedule_attempts_total{profile,result},
// scheduler_scheduling_attempt_duration_seconds{profile,result},
// scheduler_pod_scheduling_attempts, scheduler_preemption_attempts_total,
// scheduler_preemption_victims, scheduler_pending_pods{queue} and
// scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}. They
// serve seed steps 9 and 10 (the scheduler picks a node and binds): how
// often, how fast, and how many pods wait.
//
// The series live in the scheduler's own registry (cmd/scheduler serves
// it at /metrics), never in the process-wide default one, since tests run
// several components in one process.
//
//	file        what it holds
//	metrics.go  Metrics: New, Attempt, ExtensionPoint, PodScheduled, Preemption, WatchPending
package metrics
