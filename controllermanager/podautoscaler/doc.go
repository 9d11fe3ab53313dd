// Package podautoscaler is the HorizontalPodAutoscaler controller
// ("horizontalpodautoscaling" in kube-controller-manager), as upstream's
// pkg/controller/podautoscaler does it: it keeps a workload's replicas
// where its metrics meet their targets, between minReplicas and
// maxReplicas (seed 003 三.4: "tracks the load of all target pods and
// adjusts the replica count within a range"; 十三 for where the numbers
// come from).
//
// Pipeline: autoscaler informer → a sync timed one period later
// (--horizontal-pod-autoscaler-sync-period, 15 s, on the injected clock)
// → worker → reconcileAutoscaler, which re-times the next sync:
//
//  1. read the target's scale subresource (any kind that has one:
//     Deployments, ReplicaSets, StatefulSets, custom resources), its
//     resource found by discovery;
//  2. for each metric, read its values (package metrics) and propose a
//     count: desired = ceil(current × usage / target), nothing within the
//     tolerance (0.1, or the behavior's per direction), pods being deleted or failed ignored, pods without
//     a sample counted against the move, not yet ready pods at 0 for cpu;
//     the largest proposal wins;
//  3. bound it: the stabilization windows (the highest recommendation of
//     the last 5 minutes on the way down), the behavior's policies (or
//     twice the pods at most without a behavior), min and max;
//  4. write the scale if it changed (event SuccessfulRescale, "New size:
//     4; reason: cpu resource utilization (percentage of request) above
//     target"), and the status: currentReplicas, desiredReplicas,
//     currentMetrics, lastScaleTime and the conditions AbleToScale,
//     ScalingActive and ScalingLimited, in Kubernetes' words, which
//     `kubectl describe hpa` shows.
//
// Where things live:
//
//	file                   what it holds (upstream file)
//	controller.go          names, defaults, Options; New, Run, the timed syncs (horizontal.go)
//	horizontal.go          reconcileAutoscaler: one sync of one autoscaler (horizontal.go)
//	compute.go             the proposals of the metrics, the selector, Resource and Pods metrics (horizontal.go)
//	external.go            the proposals of Object and External metrics (horizontal.go)
//	normalize.go           bounding a proposal with and without a behavior, and the ScalingLimited reasons (horizontal.go)
//	behavior.go            what is remembered between syncs: recommendations, rescales, the policies' limits (horizontal.go)
//	conditions.go          setting conditions and status, and whether it changed (horizontal.go)
//	replica_calculator.go  ReplicaCalculator: from samples and target to a count (replica_calculator.go)
//	pods.go                sorting pods by trust, readiness, summing requests (replica_calculator.go)
//	scale.go               the scale subresource of any kind, found by discovery (scale client, RESTMapper)
//	describe.go            a metric's value and target as the log shows them
//
// Package metrics (upstream's metrics/) reads metrics.k8s.io,
// custom.metrics.k8s.io and external.metrics.k8s.io.
//
// Not done as upstream: scaling to zero (HPAScaleToZero) is not enabled;
// overlapping autoscalers of one target are not detected; the
// controller's own metrics (horizontal_pod_autoscaler_controller_*) are
// left to the controller manager's /metrics.
package podautoscaler
