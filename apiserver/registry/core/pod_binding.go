package core

import (
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/internal/podcondition"
)

// bindingSubresource is POST pods/<name>/binding: seed step 10, "the
// scheduler writes its decision back through the APIServer". It sets
// spec.nodeName once; a second binding is a 409 Conflict, because a pod
// never moves.
var bindingSubresource = apiserver.Subresource{Name: "binding", Kind: "Binding", Verbs: []string{"create"}, Serve: serveBinding}

func serveBinding(q *apiserver.Request) {
	obj, err := q.DecodeBodyAs(v1.WithKind("Binding"), &corev1.Binding{})
	if err != nil {
		q.Fail(err)
		return
	}
	b := obj.(*corev1.Binding)
	if b.Name != "" && b.Name != q.Info.Name {
		q.Fail(apierrors.NewBadRequest(fmt.Sprintf("binding name %q does not match pod name %q", b.Name, q.Info.Name)))
		return
	}
	if b.Target.Name == "" || (b.Target.Kind != "" && b.Target.Kind != "Node") {
		q.Fail(apierrors.NewInvalid(v1.WithKind("Binding").GroupKind(), q.Info.Name,
			field.ErrorList{field.Required(field.NewPath("target", "name"), "must name a Node")}))
		return
	}
	gr := q.Storage.Resource().GroupResource()
	bound, err := q.Storage.Update(q.Context(), q.Info.Namespace, q.Info.Name, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(gr, pod.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(gr, pod.Name, errors.New("pod is being deleted, cannot be assigned to a host"))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(gr, pod.Name, fmt.Errorf("pod %s is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = b.Target.Name
		for k, v := range b.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(q.Now())}
		if c := podcondition.Get(pod, corev1.PodScheduled); c != nil {
			*c = scheduled
		} else {
			pod.Status.Conditions = append(pod.Status.Conditions, scheduled)
		}
		return pod, nil
	})
	if err != nil {
		q.Fail(err)
		return
	}
	q.Stored(bound)
	q.Respond(http.StatusCreated, successStatus(http.StatusCreated), nil)
}

// successStatus is the Status a subresource POST answers with when it
// has no object to return.
func successStatus(code int32) *metav1.Status {
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: code}
}
