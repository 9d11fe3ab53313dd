package replicaset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/client"
)

// kind is what one Controller manages. ReplicationControllers do the job
// of ReplicaSets with an equality-only selector, so the same controller
// serves both, viewing each ReplicationController as a ReplicaSet — which
// is exactly how Kubernetes' replication manager reuses its ReplicaSet
// controller.
type kind struct {
	gvk schema.GroupVersionKind
	res client.Resource
	// asReplicaSet views a cached object as a ReplicaSet; treat it as
	// read-only, like the cached object itself.
	asReplicaSet func(obj runtime.Object) *appsv1.ReplicaSet
	// withStatus returns the object to PUT to the status subresource.
	withStatus func(rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) runtime.Object
}

var replicaSets = kind{
	gvk:          appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
	res:          client.ReplicaSets,
	asReplicaSet: func(obj runtime.Object) *appsv1.ReplicaSet { return obj.(*appsv1.ReplicaSet) },
	withStatus: func(rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) runtime.Object {
		next := rs.DeepCopy()
		next.Status = st
		return next
	},
}

var replicationControllers = kind{
	gvk: corev1.SchemeGroupVersion.WithKind("ReplicationController"),
	res: client.ReplicationControllers,
	asReplicaSet: func(obj runtime.Object) *appsv1.ReplicaSet {
		rc := obj.(*corev1.ReplicationController)
		rs := &appsv1.ReplicaSet{
			TypeMeta:   rc.TypeMeta, // events name the ReplicationController
			ObjectMeta: rc.ObjectMeta,
			Spec: appsv1.ReplicaSetSpec{Replicas: rc.Spec.Replicas, MinReadySeconds: rc.Spec.MinReadySeconds,
				Selector: &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}},
			Status: appsv1.ReplicaSetStatus{Replicas: rc.Status.Replicas, FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
				ReadyReplicas: rc.Status.ReadyReplicas, AvailableReplicas: rc.Status.AvailableReplicas,
				ObservedGeneration: rc.Status.ObservedGeneration},
		}
		for _, c := range rc.Status.Conditions {
			rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetConditionType(c.Type),
				Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
		}
		if rc.Spec.Template != nil {
			rs.Spec.Template = *rc.Spec.Template
		}
		return rs
	},
	withStatus: func(rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) runtime.Object {
		rc := &corev1.ReplicationController{TypeMeta: rs.TypeMeta, ObjectMeta: *rs.ObjectMeta.DeepCopy(),
			Status: corev1.ReplicationControllerStatus{Replicas: st.Replicas, FullyLabeledReplicas: st.FullyLabeledReplicas,
				ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas, ObservedGeneration: st.ObservedGeneration}}
		for _, c := range st.Conditions { // ReplicaFailure is the same condition on both kinds
			rc.Status.Conditions = append(rc.Status.Conditions, corev1.ReplicationControllerCondition{Type: corev1.ReplicationControllerConditionType(c.Type),
				Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
		}
		return rc
	},
}
