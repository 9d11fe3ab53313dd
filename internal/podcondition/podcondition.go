// Package podcondition reads a pod's conditions as Kubernetes does
// (k8s.io/kubernetes/pkg/api/v1/pod): the API server's printers and the
// controllers that count ready pods (ReplicaSet, Endpoints, disruption
// budgets) all ask the same question.
package podcondition

import corev1 "k8s.io/api/core/v1"

// Get returns the pod's condition of type typ, or nil. The pointer is
// into pod.Status.Conditions, so a caller holding its own copy may set it.
func Get(pod *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == typ {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// IsReady says whether the pod's Ready condition is True.
func IsReady(pod *corev1.Pod) bool {
	c := Get(pod, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsInitialized says whether the pod's Initialized condition is True:
// its init containers are done.
func IsInitialized(pod *corev1.Pod) bool {
	c := Get(pod, corev1.PodInitialized)
	return c != nil && c.Status == corev1.ConditionTrue
}
