package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	kubetypes "github.com/mkube/mkube/kubelet/types"
)

// Ephemeral containers (`kubectl debug -it pod --image=busybox`): a user
// adds one to a running pod through its ephemeralcontainers subresource,
// and the kubelet starts it in the pod's sandbox beside the others, once
// the pod's own containers run (computePodActions' EphemeralContainersToStart).
// It runs once: it is never restarted and never probed, it does not count
// for the pod's phase or readiness, and it stops with the pod. Its status
// is status.ephemeralContainerStatuses; exec, attach and logs reach it by
// name, as any container.

// isEphemeral: name is one of the pod's ephemeral containers.
func isEphemeral(pod *corev1.Pod, name string) bool {
	for _, ec := range pod.Spec.EphemeralContainers {
		if ec.Name == name {
			return true
		}
	}
	return false
}

// syncEphemeralContainers starts each ephemeral container that has not
// run yet; one that ran stays as it is, running or exited.
func (k *Kubelet) syncEphemeralContainers(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, waiting map[string]*corev1.ContainerStateWaiting) error {
	for _, c := range kubetypes.EphemeralContainers(pod) {
		if cur := sb.Containers[c.Name]; cur != nil && cur.State != runtimeapi.ContainerState_CONTAINER_CREATED {
			continue // created before: it started (or failed to) already
		}
		k.log.Info("starting ephemeral container", "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image)
		w, err := k.syncContainer(ctx, pod, sb, c)
		if err != nil {
			return err
		}
		if w != nil {
			waiting[c.Name] = w
		}
	}
	return nil
}
