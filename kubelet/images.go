package kubelet

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

// Waiting reasons of a container whose image is not there: the policy
// is Never; a pull failed; a pull failed and waits for its back-off.
const (
	errImageNeverPull      = "ErrImageNeverPull"
	reasonErrImagePull     = "ErrImagePull"
	reasonImagePullBackOff = "ImagePullBackOff"
)

// imagePullBackOff is how long a failed pull waits before the next try,
// and why it failed.
func (k *Kubelet) imagePullBackOff(key string) (time.Duration, string) {
	remaining := k.pullBackOff.waitSinceUpdate(key)
	if remaining == 0 {
		return 0, ""
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return remaining, k.pullErrors[key]
}

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
	// A pull that failed is not tried again before its back-off (10 s
	// doubling to 5 min, as the kubelet's image puller): meanwhile the
	// container is ImagePullBackOff.
	pullKey := string(pod.UID) + "_" + c.Image
	if remaining, lastErr := k.imagePullBackOff(pullKey); remaining > 0 {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		if reportedWaiting(pod, c.Name) != reasonImagePullBackOff { // once per back-off
			k.recorder.Event(pod, corev1.EventTypeNormal, "BackOff", "%s", msg)
			k.recorder.Event(pod, corev1.EventTypeWarning, "Failed", "Error: %s", reasonImagePullBackOff)
		}
		k.queue.AddAfter(client.KeyOf(pod), remaining)
		return "", &corev1.ContainerStateWaiting{Reason: reasonImagePullBackOff, Message: msg + ": " + reasonErrImagePull + ": " + lastErr}, nil
	}
	k.recorder.Event(pod, corev1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	k.log.Info("pulling image", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image, "policy", c.ImagePullPolicy)
	start := k.clock.Now()
	pulled, err := k.runtime.images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec,
		SandboxConfig: sandboxConfig(pod, 0, k.cfg.PodLogsDir)})
	if st, ok := status.FromError(err); ok && err != nil && st.Code() != codes.Canceled && st.Code() != codes.Unavailable {
		// The registry said no: ErrImagePull, and the back-off starts.
		k.pullBackOff.next(pullKey, k.clock.Now())
		k.mu.Lock()
		k.pullErrors[pullKey] = err.Error()
		k.mu.Unlock()
		k.recorder.Event(pod, corev1.EventTypeWarning, "Failed", "Failed to pull image %q: %v", c.Image, err)
		k.recorder.Event(pod, corev1.EventTypeWarning, "Failed", "Error: %s", reasonErrImagePull)
		k.log.Warn("image pull failed", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image, "err", st.Message())
		k.queue.AddAfter(client.KeyOf(pod), k.cfg.BackOffInitial)
		return "", &corev1.ContainerStateWaiting{Reason: reasonErrImagePull, Message: err.Error()}, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("pull image %q: %w", c.Image, err) // the runtime went away: retried
	}
	k.pullBackOff.forget(pullKey)
	k.fleet.imagesChanged()
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
