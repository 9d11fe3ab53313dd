package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
)

// shouldPull is the kubelet's image pull policy (pkg/kubelet/images):
// Always pulls every time a container starts, IfNotPresent only when the
// image is not on the node, Never never. The API server defaults the
// policy: Always for ":latest" or no tag, IfNotPresent otherwise.
func shouldPull(policy corev1.PullPolicy, present bool) bool {
	switch policy {
	case corev1.PullAlways:
		return true
	case corev1.PullNever:
		return false
	}
	return !present
}

// errImageNeverPull is the container status' waiting reason when the
// policy is Never and the image is missing.
const errImageNeverPull = "ErrImageNeverPull"

// ensureImage makes container c's image present, with the events `kubectl
// describe pod` shows: Pulling and Pulled, or Pulled "already present". If
// the image cannot be had it returns the waiting state to report instead.
func (k *Kubelet) ensureImage(ctx context.Context, pod *corev1.Pod, c corev1.Container) (*corev1.ContainerStateWaiting, error) {
	_, present := k.containerRuntime.ImageStatus(c.Image)
	if !shouldPull(c.ImagePullPolicy, present) {
		if present {
			k.recorder.Event(pod, corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
			return nil, nil
		}
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		k.recorder.Event(pod, corev1.EventTypeWarning, errImageNeverPull, "%s", msg)
		k.log.Warn("cannot start container: image not present", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image)
		return &corev1.ContainerStateWaiting{Reason: errImageNeverPull, Message: msg}, nil
	}
	k.recorder.Event(pod, corev1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	k.log.Info("pulling image", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image, "policy", c.ImagePullPolicy)
	start := k.clock.Now()
	img, err := k.containerRuntime.PullImage(ctx, c.Image)
	if err != nil {
		return nil, fmt.Errorf("pull image %q: %w", c.Image, err)
	}
	took := k.clock.Since(start).Round(time.Millisecond)
	k.log.Info("pulled image", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "image", c.Image, "took", took, "sizeBytes", img.Size)
	// Fake pulls never wait behind other pulls, hence the same time twice.
	k.recorder.Event(pod, corev1.EventTypeNormal, "Pulled",
		"Successfully pulled image %q in %s (%s including waiting). Image size: %d bytes.", c.Image, took, took, img.Size)
	return nil, nil
}
