package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// serveScale is the /scale subresource: spec.replicas of a Deployment or
// ReplicaSet, seen and changed as an autoscaling/v1 Scale (what
// `kubectl scale` and the HPA use).
func (s *Server) serveScale(q *request) {
	res := q.st.res
	if !res.Scale {
		writeError(q.w, apierrors.NewNotFound(res.GroupResource(), q.info.Name+"/scale"))
		return
	}
	ctx := q.r.Context()
	switch q.info.Verb {
	case "get":
		obj, err := q.st.Get(ctx, q.info.Namespace, q.info.Name)
		if err != nil {
			writeError(q.w, err)
			return
		}
		writeJSON(q.w, http.StatusOK, scaleOf(obj))
	case "update", "patch":
		data, err := readBody(q.r)
		if err != nil {
			writeError(q.w, err)
			return
		}
		patchType := types.PatchType(q.r.Header.Get("Content-Type"))
		updated, err := q.st.Update(ctx, q.info.Namespace, q.info.Name, func(cur runtime.Object) (runtime.Object, error) {
			want, err := newScale(cur, q.info.Verb, patchType, data)
			if err != nil {
				return nil, err
			}
			if want.Spec.Replicas < 0 {
				return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), q.info.Name,
					field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), want.Spec.Replicas, "must be greater than or equal to 0")})
			}
			next := cur.DeepCopyObject()
			fieldOf(next, "Spec").FieldByName("Replicas").Set(reflect.ValueOf(&want.Spec.Replicas))
			m, _ := meta.Accessor(next)
			m.SetResourceVersion(want.ResourceVersion)
			return q.st.prepareUpdate(q.r.Context(), cur, next, "")
		})
		if err != nil {
			writeError(q.w, err)
			return
		}
		s.logWrite(q, updated)
		writeJSON(q.w, http.StatusOK, scaleOf(updated))
	default:
		writeError(q.w, apierrors.NewMethodNotSupported(res.GroupResource(), q.r.Method))
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

// serveBinding is POST pods/<name>/binding: seed step 10, "the scheduler
// writes its decision back through the APIServer". It sets spec.nodeName
// once; a second binding is a 409 Conflict, because a pod never moves.
func (s *Server) serveBinding(q *request) {
	if q.st.res != podsResource || q.info.Verb != "create" {
		writeError(q.w, apierrors.NewNotFound(q.st.res.GroupResource(), q.info.Name+"/binding"))
		return
	}
	data, err := readBody(q.r)
	if err != nil {
		writeError(q.w, err)
		return
	}
	obj, err := decodeInto(data, corev1.SchemeGroupVersion.WithKind("Binding"), &corev1.Binding{})
	if err != nil {
		writeError(q.w, err)
		return
	}
	b := obj.(*corev1.Binding)
	if b.Name != "" && b.Name != q.info.Name {
		writeError(q.w, badRequest("binding name %q does not match pod name %q", b.Name, q.info.Name))
		return
	}
	if b.Target.Name == "" || (b.Target.Kind != "" && b.Target.Kind != "Node") {
		writeError(q.w, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), q.info.Name,
			field.ErrorList{field.Required(field.NewPath("target", "name"), "must name a Node")}))
		return
	}
	bound, err := q.st.Update(q.r.Context(), q.info.Namespace, q.info.Name, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(podsResource.GroupResource(), pod.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(podsResource.GroupResource(), pod.Name, errors.New("pod is being deleted, cannot be assigned to a host"))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(podsResource.GroupResource(), pod.Name, fmt.Errorf("pod %s is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = b.Target.Name
		for k, v := range b.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		setPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(s.now())})
		return pod, nil
	})
	if err != nil {
		writeError(q.w, err)
		return
	}
	s.logWrite(q, bound)
	writeJSON(q.w, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

// setPodCondition replaces the condition of the same type, or adds it.
func setPodCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

func fieldErr(path, msg string) field.ErrorList {
	return field.ErrorList{field.Invalid(field.NewPath(path), nil, msg)}
}

// serveFinalize is PUT namespaces/<name>/finalize: the namespace
// controller's way to say "my part of the deletion is done" by removing
// its name from spec.finalizers. Nothing else of the namespace changes.
func (s *Server) serveFinalize(q *request) {
	if q.st.res != namespacesResource || q.info.Verb != "update" {
		writeError(q.w, notFoundPath(q.r.URL.Path))
		return
	}
	obj, err := s.decodeBody(q)
	if err != nil {
		writeError(q.w, err)
		return
	}
	want := obj.(*corev1.Namespace).Spec.Finalizers
	updated, err := q.st.Update(q.r.Context(), "", q.info.Name, func(cur runtime.Object) (runtime.Object, error) {
		ns := cur.(*corev1.Namespace)
		ns.Spec.Finalizers = want
		return ns, nil
	})
	if err == nil {
		s.logWrite(q, updated)
	}
	respond(q.w, http.StatusOK, updated, err)
}
