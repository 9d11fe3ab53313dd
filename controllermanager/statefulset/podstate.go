package statefulset

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/podcondition"
)

// The states of a stateful pod the ordering rules read, as Kubernetes'
// stateful_set_utils.go names them. A pod the controller means to create
// in this sync is a pod object without a phase: not created, and so not
// available either.

// isCreated: the API server has the pod (it stores every pod Pending).
func isCreated(pod *corev1.Pod) bool { return pod.Status.Phase != "" }

func isPending(pod *corev1.Pod) bool { return pod.Status.Phase == corev1.PodPending }

// isTerminal: Failed or Succeeded. A stateful pod is always replaced:
// Succeeded too, since a pod stopped by its node (an eviction, a reboot)
// ends with whatever its container exited with.
func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

func isTerminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil }

func isRunningAndReady(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && podcondition.IsReady(pod)
}

// availableIn is how long until a ready pod has been ready for
// minReadySeconds (0 or less: it is available now). Not ready: never.
func availableIn(pod *corev1.Pod, minReadySeconds int32, now time.Time) (time.Duration, bool) {
	c := podcondition.Get(pod, corev1.PodReady)
	if c == nil || c.Status != corev1.ConditionTrue {
		return 0, false
	}
	if minReadySeconds == 0 || c.LastTransitionTime.IsZero() {
		return 0, true
	}
	return c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second).Sub(now), true
}

// isAvailable is Kubernetes' IsPodAvailable: ready for minReadySeconds.
func isAvailable(pod *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	wait, ready := availableIn(pod, minReadySeconds, now)
	return ready && wait <= 0
}

// isUnavailable counts against maxUnavailable: not available, or going.
func isUnavailable(pod *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	return !isAvailable(pod, minReadySeconds, now) || isTerminating(pod)
}
