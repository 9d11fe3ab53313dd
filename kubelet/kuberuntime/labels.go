package kuberuntime

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// The labels the kubelet puts on every sandbox and container it creates
// (pkg/kubelet/types/labels.go). It finds its pods by them after a
// restart, and `crictl ps --label io.kubernetes.pod.name=web` relies on
// them.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"
)

// LabelNodeName is the sandbox label naming the pod's node: mkube's own,
// beside the kubelet's io.kubernetes.pod.* ones, so that a runtime shared
// by a fleet tells whose each sandbox is.
const LabelNodeName = "mkube.io/node-name"

// podLabels are the sandbox's labels: the pod's own, the kubelet's, and
// mkube's node name.
func podLabels(pod *corev1.Pod) map[string]string {
	labels := maps.Clone(pod.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelPodName], labels[LabelPodNamespace], labels[LabelPodUID] = pod.Name, pod.Namespace, string(pod.UID)
	labels[LabelNodeName] = pod.Spec.NodeName
	return labels
}
