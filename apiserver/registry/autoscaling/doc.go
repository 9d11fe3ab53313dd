// Package autoscaling declares the autoscaling group's
// HorizontalPodAutoscalers: stored as autoscaling/v2, the version with
// every field (metrics of five kinds, scaling behavior, conditions), and
// served as autoscaling/v1 too, the older face that knows only a CPU
// utilization target, through Kubernetes' v1<->v2 conversion (the other
// metrics, the behavior and the conditions travel in annotations).
//
// mkube has no HPA controller: it has no metrics API (metrics.k8s.io,
// custom.metrics.k8s.io) for one to read. An autoscaler is stored,
// defaulted, validated and shown as Kubernetes does, but nothing scales
// its target or writes its status: `kubectl get hpa` shows
// "cpu: <unknown>/80%" and 0 replicas, as Kubernetes does for an
// autoscaler whose metrics cannot be read yet.
//
// Where things live:
//
//	file                         what it holds
//	horizontalpodautoscalers.go  the kind at v2 (stored) and at v1
//	conversion.go                v1 ⇄ v2, keeping what v1 cannot say in annotations
//	defaults.go                  the defaults: 80% cpu utilization, the scale-up and scale-down behavior
//	validation.go                ValidateHPA and ValidateHPAStatus, in Kubernetes' words
//	resourcename.go              which resource names a metric may name
//	printer.go                   the table `kubectl get hpa` shows: REFERENCE, TARGETS, MINPODS, MAXPODS, REPLICAS
package autoscaling
