package kubelet

import (
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/kubelet/kuberuntime"
)

// The Kubelet's side of kubelet/kuberuntime, which turns a pod's spec
// into CRI calls: the names this package still uses, and the CRI configs
// built with this package's own helpers (/etc/hosts' hostname, $(VAR)
// expansion, the volumes' mounts).

// The labels of the kubelet's sandboxes and containers, by which it
// lists them (kubelet/kuberuntime's labels.go).
const (
	labelPodName       = kuberuntime.LabelPodName
	labelPodNamespace  = kuberuntime.LabelPodNamespace
	labelPodUID        = kuberuntime.LabelPodUID
	labelContainerName = kuberuntime.LabelContainerName
	labelNodeName      = kuberuntime.LabelNodeName
)

// criConfigs builds the CRI configs of the sandboxes and containers of
// a node whose runtime writes the logs in podLogsDir.
func criConfigs(podLogsDir string) kuberuntime.Configs {
	return kuberuntime.Configs{PodLogsDir: podLogsDir, Hostname: podHostname, // etchosts.go
		ExpandArgs: expandArgs, VolumeMounts: volumeMounts} // expansion.go, volumes.go
}

// sandboxConfig is the attempt-th sandbox's config of pod, whose logs go
// to podLogsDir (kubelet/kuberuntime's SandboxConfig).
func sandboxConfig(pod *corev1.Pod, attempt uint32, podLogsDir string) *runtimeapi.PodSandboxConfig {
	return criConfigs(podLogsDir).SandboxConfig(pod, attempt)
}

// containerConfig is the attempt-th instance's config of c, from the
// image imageRef, with the environment env (kubelet/kuberuntime's
// ContainerConfig).
func containerConfig(pod *corev1.Pod, c corev1.Container, attempt uint32, imageRef string, env []corev1.EnvVar) *runtimeapi.ContainerConfig {
	return criConfigs("").ContainerConfig(pod, c, attempt, imageRef, env)
}

// podLogDirectory is the pod's log directory under root.
func podLogDirectory(root string, pod *corev1.Pod) string {
	return kuberuntime.PodLogDirectory(root, pod)
}
