package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

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
// describe pod` shows: Pulling and Pulled, or Pulled "already present". It
// returns the image's ref (its ID) for CreateContainer or, if the image
// cannot be had, the waiting state to report instead.
//
// The image is asked for as the pod spec names it; the runtime
// normalizes the name ("nginx:1.25" is docker.io/library/nginx:1.25).
func (k *Kubelet) ensureImage(ctx context.Context, pod *corev1.Pod, c corev1.Container) (string, *corev1.ContainerStateWaiting, error) {
	spec := &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image}
	st, err := k.runtime.images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	if err != nil {
		return "", nil, fmt.Errorf("image status %q: %w", c.Image, err)
	}
	present := st.GetImage() != nil
	if !shouldPull(c.ImagePullPolicy, present) {
		if present {
			k.recorder.Event(pod, corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
			return st.GetImage().GetId(), nil, nil
		}
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		k.recorder.Event(pod, corev1.EventTypeWarning, errImageNeverPull, "%s", msg)
		k.log.Warn("cannot start container: image not present", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image)
		return "", &corev1.ContainerStateWaiting{Reason: errImageNeverPull, Message: msg}, nil
	}
	k.recorder.Event(pod, corev1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	k.log.Info("pulling image", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image, "policy", c.ImagePullPolicy)
	start := k.clock.Now()
	pulled, err := k.runtime.images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec,
		SandboxConfig: sandboxConfig(pod, 0, k.cfg.PodLogsDir)})
	if err != nil {
		return "", nil, fmt.Errorf("pull image %q: %w", c.Image, err)
	}
	took := k.clock.Since(start).Round(time.Millisecond)
	// The event gives the size, which PullImage does not: ImageStatus does.
	var size uint64
	if st, err := k.runtime.images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec}); err == nil {
		size = st.GetImage().GetSize()
	}
	k.log.Info("pulled image", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "image", c.Image, "took", took,
		"imageRef", pulled.GetImageRef(), "sizeBytes", size)
	// Pulls here never wait behind other pulls, hence the same time twice.
	k.recorder.Event(pod, corev1.EventTypeNormal, "Pulled",
		"Successfully pulled image %q in %s (%s including waiting). Image size: %d bytes.", c.Image, took, took, size)
	return pulled.GetImageRef(), nil, nil
}
