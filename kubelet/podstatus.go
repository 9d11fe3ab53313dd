package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/status"
)

// reportStatus is step 13: the pod's status as the runtime (sb), the
// probes, the resources allocated and waiting (why containers could not
// start, by name) make it, written by the status manager (package
// status) if it changed. It returns the pod as now stored, or nil if the
// pod is gone or was replaced by a new pod of the same name.
func (k *Kubelet) reportStatus(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, waiting map[string]*corev1.ContainerStateWaiting) (*corev1.Pod, error) {
	k.probes.UpdatePodStatus(pod, sb)
	updated, err := k.status.Report(ctx, pod, func(pod *corev1.Pod) corev1.PodStatus {
		st := status.GeneratePodStatus(pod, sb, waiting, k.cfg.NodeIP, k.clock.Now())
		alloc, pendingResize := k.admission.Allocation(pod)
		setResourceStatus(&st, alloc, sb, pendingResize, metav1.NewTime(k.clock.Now()).Rfc3339Copy()) // resize.go
		return st
	})
	if err == nil {
		k.metrics.Kubelet.ObservePodStatus(updated) // kubelet_pod_start_sli_duration_seconds
	}
	return updated, err
}
