package autoscaling

import (
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// HorizontalPodAutoscalers (autoscaling/v2) say how many replicas a
// scalable target (a Deployment, through its scale subresource) should
// have between minReplicas and maxReplicas, to keep its metrics at their
// targets. Stored in this version, which the HPA controller
// (controllermanager/podautoscaler) reads and writes.
var HorizontalPodAutoscalers = &apiserver.Resource{
	GroupVersion: autoscalingv2.SchemeGroupVersion, Name: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true,
	ShortNames: []string{"hpa"}, Categories: []string{"all"},
	Subresources: []apiserver.Subresource{apiserver.WritesSubresource("status", func(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
		// autoscalerStatusStrategy: the spec stays.
		out := cur.(*autoscalingv2.HorizontalPodAutoscaler).DeepCopy()
		out.Status = next.(*autoscalingv2.HorizontalPodAutoscaler).Status
		return out, ValidateHPAStatus(out)
	})},
	New:     func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
	NewList: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*autoscalingv2.HorizontalPodAutoscaler).Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
	},
	Default: func(obj runtime.Object) { defaultHPA(obj.(*autoscalingv2.HorizontalPodAutoscaler)) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		var prev *autoscalingv2.HorizontalPodAutoscaler
		if old != nil {
			prev = old.(*autoscalingv2.HorizontalPodAutoscaler)
		}
		return ValidateHPA(obj.(*autoscalingv2.HorizontalPodAutoscaler), prev)
	},
	Columns: hpaColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		return hpaRow(obj.(*autoscalingv2.HorizontalPodAutoscaler), now)
	},
}

// HorizontalPodAutoscalersV1 are the same objects seen as autoscaling/v1,
// converted on every read and write (toV1, fromV1). Defaulting and
// validation are v2's, on the converted object, as Kubernetes validates
// every version's objects in its internal form (hence error paths such
// as spec.metrics[0].resource.target.averageUtilization for a bad
// targetCPUUtilizationPercentage).
//
// One difference: Kubernetes keeps the stored status on a v1 update from
// its internal form, mkube from the v1 view, whose conditions and
// current metrics live in annotations: a v1 client that drops them drops
// them from the status too, until the HPA controller's next sync writes
// them again.
var HorizontalPodAutoscalersV1 = &apiserver.Resource{
	GroupVersion: autoscalingv1.SchemeGroupVersion, Name: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true,
	ShortNames: []string{"hpa"}, Categories: []string{"all"},
	Subresources: []apiserver.Subresource{apiserver.WritesSubresource("status", func(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
		out := cur.(*autoscalingv1.HorizontalPodAutoscaler).DeepCopy()
		out.Status = next.(*autoscalingv1.HorizontalPodAutoscaler).Status
		return out, ValidateHPAStatus(stored(out))
	})},
	New:     func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
	NewList: func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} },
	StoredAs: &apiserver.Conversion{
		New: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		GVK: autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		ToStored: func(obj runtime.Object) (runtime.Object, error) {
			return stored(obj.(*autoscalingv1.HorizontalPodAutoscaler)), nil
		},
		FromStored: func(obj runtime.Object) (runtime.Object, error) {
			return toV1(obj.(*autoscalingv2.HorizontalPodAutoscaler)), nil
		},
	},
	PrepareForCreate: func(obj runtime.Object) {
		hpa := obj.(*autoscalingv1.HorizontalPodAutoscaler)
		hpa.Status = autoscalingv1.HorizontalPodAutoscalerStatus{}
		// The status annotations are the status too.
		for _, k := range []string{metricStatusesAnnotation, conditionsAnnotation} {
			delete(hpa.Annotations, k)
		}
	},
	Default: func(obj runtime.Object) {
		// Through v2 and back: minReplicas 1, the 80% CPU target, and
		// v2's defaults kept in the annotations, as a v1 client reads
		// the object back from Kubernetes.
		hpa := obj.(*autoscalingv1.HorizontalPodAutoscaler)
		typeMeta := hpa.TypeMeta
		*hpa = *toV1(stored(hpa))
		hpa.TypeMeta = typeMeta
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		var prev *autoscalingv2.HorizontalPodAutoscaler
		if old != nil {
			prev = stored(old.(*autoscalingv1.HorizontalPodAutoscaler))
		}
		return ValidateHPA(stored(obj.(*autoscalingv1.HorizontalPodAutoscaler)), prev)
	},
	Columns: hpaColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		return hpaRow(stored(obj.(*autoscalingv1.HorizontalPodAutoscaler)), now)
	},
}

// stored is a v1 autoscaler as v2 stores it: converted, then defaulted
// (Kubernetes defaults v1's minReplicas on decoding, and v2's fields when
// the stored object is read).
func stored(hpa *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := fromV1(hpa)
	defaultHPA(out)
	return out
}
