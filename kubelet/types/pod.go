package types

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodGVK is set on every pod the kubelet works with: events name the
// object by apiVersion and kind.
var PodGVK = corev1.SchemeGroupVersion.WithKind("Pod")

// The annotations of a static pod's mirror (pkg/kubelet/types there).
const (
	ConfigMirrorAnnotationKey = "kubernetes.io/config.mirror" // the static pod's hash: this is a mirror
	ConfigHashAnnotationKey   = "kubernetes.io/config.hash"
	ConfigSourceAnnotationKey = "kubernetes.io/config.source" // "file"
	ConfigSeenAnnotationKey   = "kubernetes.io/config.seen"
)

// IsMirrorPod: the pod is the mirror of a static pod.
func IsMirrorPod(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[ConfigMirrorAnnotationKey]
	return ok
}

// RuntimeUID is the UID the runtime knows the pod by: a mirror's is its
// static pod's hash.
func RuntimeUID(pod *corev1.Pod) types.UID {
	if hash, ok := pod.Annotations[ConfigMirrorAnnotationKey]; ok {
		return types.UID(hash)
	}
	return pod.UID
}

// IsSidecar: an init container that keeps running beside the app
// containers (restartPolicy: Always on the init container).
func IsSidecar(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// EphemeralContainers are the pod's ephemeral containers as Containers,
// which they are but for the fields they may not set.
func EphemeralContainers(pod *corev1.Pod) []corev1.Container {
	out := make([]corev1.Container, 0, len(pod.Spec.EphemeralContainers))
	for _, ec := range pod.Spec.EphemeralContainers {
		out = append(out, corev1.Container(ec.EphemeralContainerCommon))
	}
	return out
}

// AllContainers are the pod's init containers, then its app containers,
// then its ephemeral ones.
func AllContainers(pod *corev1.Pod) []corev1.Container {
	return append(append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...), EphemeralContainers(pod)...)
}

// ReportedStatus is the pod status' entry for container name (an app,
// init or ephemeral container), or nil.
func ReportedStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// ReportedWaiting is the waiting reason the pod's status shows for
// container name, "" if none.
func ReportedWaiting(pod *corev1.Pod, name string) string {
	if cs := ReportedStatus(pod, name); cs != nil && cs.State.Waiting != nil {
		return cs.State.Waiting.Reason
	}
	return ""
}

// PodFinished: nothing of the pod runs any more, and nothing will.
func PodFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
