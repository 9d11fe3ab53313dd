// Package autoscaling declares the autoscaling group's
// HorizontalPodAutoscalers: stored as autoscaling/v2, the version with
// every field (metrics of five kinds, scaling behavior, conditions), and
// served as autoscaling/v1 too, the older face that knows only a CPU
// utilization target, through Kubernetes' v1<->v2 conversion (the other
// metrics, the behavior and the conditions travel in annotations).
//
// The controller manager's HPA controller (controllermanager/podautoscaler)
// acts on them: it reads the target's scale and the pods' metrics
// (metrics.k8s.io, and custom.metrics.k8s.io and external.metrics.k8s.io
// where served), rescales the target and writes the status, which
// `kubectl get hpa` shows as "cpu: 200%/50%". Until the metrics can be
// read it shows "cpu: <unknown>/80%", as Kubernetes does.
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
