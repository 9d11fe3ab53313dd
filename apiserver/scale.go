package apiserver

import (
	"net/http"
	"reflect"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ScaleSubresource is .../scale: spec.replicas of a Deployment,
// ReplicaSet or ReplicationController, seen and changed as an
// autoscaling/v1 Scale (what `kubectl scale` and the HPA use).
var ScaleSubresource = Subresource{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale",
	Verbs: []string{"get", "patch", "update"}, Serve: serveScale}

func serveScale(q *Request) {
	ctx := q.R.Context()
	switch q.Info.Verb {
	case "get":
		obj, err := q.Storage.Get(ctx, q.Info.Namespace, q.Info.Name)
		if err != nil {
			writeError(q.W, err)
			return
		}
		writeJSON(q.W, http.StatusOK, scaleOf(obj))
	case "update", "patch":
		data, err := readBody(q.R)
		if err != nil {
			writeError(q.W, err)
			return
		}
		patchType := types.PatchType(q.R.Header.Get("Content-Type"))
		updated, err := q.Storage.Update(ctx, q.Info.Namespace, q.Info.Name, func(cur runtime.Object) (runtime.Object, error) {
			want, err := newScale(cur, q.Info.Verb, patchType, data)
			if err != nil {
				return nil, err
			}
			if want.Spec.Replicas < 0 {
				return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), q.Info.Name,
					field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), want.Spec.Replicas, "must be greater than or equal to 0")})
			}
			next := cur.DeepCopyObject()
			fieldOf(next, "Spec").FieldByName("Replicas").Set(reflect.ValueOf(&want.Spec.Replicas))
			m, _ := meta.Accessor(next)
			m.SetResourceVersion(want.ResourceVersion)
			return q.Storage.prepareUpdate(q.R.Context(), cur, next, "")
		})
		if err != nil {
			writeError(q.W, err)
			return
		}
		q.Stored(updated)
		writeJSON(q.W, http.StatusOK, scaleOf(updated))
	}
}

// newScale is the Scale a PUT sends, or the current Scale with a PATCH
// applied.
func newScale(cur runtime.Object, verb string, patchType types.PatchType, data []byte) (*autoscalingv1.Scale, error) {
	want := autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	if verb == "update" {
		obj, err := decodeInto(data, want, &autoscalingv1.Scale{})
		if err != nil {
			return nil, err
		}
		return obj.(*autoscalingv1.Scale), nil
	}
	scaleRes := &Resource{GroupVersion: want.GroupVersion(), Kind: "Scale", New: func() runtime.Object { return &autoscalingv1.Scale{} }}
	obj, _, err := applyPatch(scaleOf(cur), patchType, data, scaleRes)
	if err != nil {
		return nil, err
	}
	return obj.(*autoscalingv1.Scale), nil
}

// scaleOf reads spec.replicas, status.replicas and the selector of a
// workload by reflection: every scalable kind has the same three fields.
func scaleOf(obj runtime.Object) *autoscalingv1.Scale {
	m, _ := meta.Accessor(obj)
	scale := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp()},
	}
	if r, ok := fieldOf(obj, "Spec").FieldByName("Replicas").Interface().(*int32); ok && r != nil {
		scale.Spec.Replicas = *r
	}
	if r, ok := fieldOf(obj, "Status").FieldByName("Replicas").Interface().(int32); ok {
		scale.Status.Replicas = r
	}
	if sel, ok := fieldOf(obj, "Spec").FieldByName("Selector").Interface().(*metav1.LabelSelector); ok && sel != nil {
		if ls, err := metav1.LabelSelectorAsSelector(sel); err == nil {
			scale.Status.Selector = ls.String()
		}
	}
	return scale
}
