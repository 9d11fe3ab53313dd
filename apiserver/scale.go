package apiserver

import (
	"fmt"
	"math"
	"net/http"
	"reflect"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// ScaleSubresource is .../scale: spec.replicas of a Deployment,
// ReplicaSet or ReplicationController, seen and changed as an
// autoscaling/v1 Scale (what `kubectl scale` and the HPA use).
var ScaleSubresource = ScaleSubresourceOf(Scaler{SpecReplicasPath: ".spec.replicas", Read: workloadScale, Write: setWorkloadReplicas})

// Scaler says where a kind keeps what its Scale shows. The built-in
// workloads have the same three fields (read by reflection); a custom
// resource has them where its definition's subresources.scale says.
type Scaler struct {
	// SpecReplicasPath names the replicas a Scale's spec stands for, in
	// the errors about them.
	SpecReplicasPath string
	// Read is obj's Scale; found is false when obj has no spec replicas
	// at all (a custom resource may lack them).
	Read func(obj runtime.Object) (scale *autoscalingv1.Scale, found bool, err error)
	// Write sets obj's spec replicas: a scale changes nothing else (its
	// status is the object's, and a client's is ignored).
	Write func(obj runtime.Object, replicas int32) error
}

// ScaleSubresourceOf is the scale subresource of a kind whose Scale sc
// reads and writes. GET, PUT and PATCH (merge, JSON, strategic merge but
// for custom resources, and apply) as kube-apiserver's ScaleREST.
func ScaleSubresourceOf(sc Scaler) Subresource {
	return Subresource{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale",
		Verbs: []string{"get", "patch", "update"}, Serve: sc.serve}
}

// unsetReplicas marks, in the Scale a PATCH starts from, spec replicas
// the object does not have, so that a patch that sets none is refused
// (Kubernetes' invalidSpecReplicas).
const unsetReplicas = math.MinInt32

func (sc Scaler) serve(q *Request) {
	ctx := q.R.Context()
	switch q.Info.Verb {
	case "get":
		obj, err := q.Storage.Get(ctx, q.Info.Namespace, q.Info.Name)
		if err != nil {
			writeError(q.W, err)
			return
		}
		scale, found, err := sc.Read(obj)
		if err == nil && !found {
			err = apierrors.NewInternalError(fmt.Errorf("the spec replicas field %q does not exist", sc.SpecReplicasPath))
		}
		if err != nil {
			writeError(q.W, asStatusError(err))
			return
		}
		if wantsTable(q.R) { // kubectl get --subresource=scale
			t := newTable(scaleTable, []runtime.Object{scale}, q.R.URL.Query().Get("includeObject"), q.Now(), true)
			t.ResourceVersion = scale.ResourceVersion
			writeJSON(q.W, http.StatusOK, t)
			return
		}
		writeJSON(q.W, http.StatusOK, scale)
	case "update", "patch":
		data, err := readBody(q.R)
		if err != nil {
			writeError(q.W, err)
			return
		}
		patchType := types.PatchType(q.R.Header.Get("Content-Type"))
		updated, err := q.Storage.Update(ctx, q.Info.Namespace, q.Info.Name, func(cur runtime.Object) (runtime.Object, error) {
			old, found, err := sc.Read(cur)
			if err != nil {
				return nil, asStatusError(err)
			}
			if !found {
				old.Spec.Replicas = unsetReplicas
			}
			want, err := newScale(old, q.Info.Verb, patchType, data, q.Storage.res)
			if err != nil {
				return nil, err
			}
			if want.Spec.Replicas == unsetReplicas {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("the spec replicas field %q cannot be empty", sc.SpecReplicasPath))
			}
			next := cur.DeepCopyObject()
			if err := sc.Write(next, want.Spec.Replicas); err != nil {
				return nil, asStatusError(err)
			}
			m, _ := meta.Accessor(next)
			if want.ResourceVersion != "" { // the client's precondition: a stale one is a Conflict
				m.SetResourceVersion(want.ResourceVersion)
			}
			return q.Storage.prepareUpdate(q.R.Context(), cur, next, "")
		})
		if err != nil {
			writeError(q.W, err)
			return
		}
		q.Stored(updated)
		scale, _, err := sc.Read(updated)
		if err != nil {
			writeError(q.W, asStatusError(err))
			return
		}
		writeJSON(q.W, http.StatusOK, scale)
	}
}

// scaleTable prints a Scale as kube-apiserver does: desired and
// available replicas.
var scaleTable = &Resource{Kind: "Scale",
	Columns: []Column{{Name: "Desired", Type: "integer"}, {Name: "Available", Type: "integer"}},
	Row: func(obj runtime.Object, _ time.Time) []any {
		scale := obj.(*autoscalingv1.Scale)
		return []any{int64(scale.Spec.Replicas), int64(scale.Status.Replicas)}
	}}

// asStatusError keeps an API error as it is and makes any other one an
// internal error, as kube-apiserver answers an error without a status.
func asStatusError(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return apierrors.NewInternalError(err)
}

// newScale is the Scale a PUT sends, the Scale an apply sends over the
// current one, or the current Scale with a PATCH applied.
func newScale(cur *autoscalingv1.Scale, verb string, patchType types.PatchType, data []byte, parent *Resource) (*autoscalingv1.Scale, error) {
	want := autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	if verb == "update" {
		obj, err := decodeInto(data, want, &autoscalingv1.Scale{})
		if err != nil {
			return nil, err
		}
		return obj.(*autoscalingv1.Scale), nil
	}
	if patchType == types.ApplyPatchType {
		return appliedScale(cur, data)
	}
	if _, custom := parent.New().(*unstructured.Unstructured); custom && patchType == types.StrategicMergePatchType {
		// Refused as on the custom resource itself.
		return nil, unsupportedPatchType(types.JSONPatchType, types.MergePatchType, types.ApplyPatchType)
	}
	scaleRes := &Resource{GroupVersion: want.GroupVersion(), Kind: "Scale", New: func() runtime.Object { return &autoscalingv1.Scale{} }}
	obj, _, err := applyPatch(cur, patchType, data, scaleRes)
	if err != nil {
		return nil, err
	}
	return obj.(*autoscalingv1.Scale), nil
}

// appliedScale is cur with the replicas of an applied Scale, if it sets
// any. Field ownership is not tracked through the scale: the parent's
// managedFields stay as they are.
func appliedScale(cur *autoscalingv1.Scale, data []byte) (*autoscalingv1.Scale, error) {
	want := autoscalingv1.SchemeGroupVersion.WithKind("Scale")
	obj, err := decodeInto(data, want, &autoscalingv1.Scale{})
	if err != nil {
		return nil, err
	}
	applied := obj.(*autoscalingv1.Scale)
	if applied.Name != cur.Name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", applied.Name, cur.Name)
	}
	next := cur.DeepCopy()
	var fields struct {
		Spec struct {
			Replicas *int32 `json:"replicas"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &fields); err != nil {
		return nil, badRequest("error decoding YAML: %v", err)
	}
	if fields.Spec.Replicas != nil {
		next.Spec.Replicas = *fields.Spec.Replicas
	}
	next.ResourceVersion = applied.ResourceVersion
	return next, nil
}

// workloadScale reads spec.replicas, status.replicas and the selector of a
// workload by reflection: every scalable kind has the same three fields.
func workloadScale(obj runtime.Object) (*autoscalingv1.Scale, bool, error) {
	scale := NewScale(obj)
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
	return scale, true, nil
}

// setWorkloadReplicas sets a workload's spec.replicas; a Scale asking
// for fewer than none is Invalid, in the Scale's words.
func setWorkloadReplicas(obj runtime.Object, replicas int32) error {
	if replicas < 0 {
		m, _ := meta.Accessor(obj)
		return apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), m.GetName(),
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), replicas, "must be greater than or equal to 0")})
	}
	fieldOf(obj, "Spec").FieldByName("Replicas").Set(reflect.ValueOf(&replicas))
	return nil
}

// NewScale is a Scale of obj with its metadata only.
func NewScale(obj runtime.Object) *autoscalingv1.Scale {
	m, _ := meta.Accessor(obj)
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp()},
	}
}
