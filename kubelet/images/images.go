package images

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/kubelet/backoff"
	kubetypes "github.com/mkube/mkube/kubelet/types"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

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
	ErrImageNeverPull      = "ErrImageNeverPull"
	reasonErrImagePull     = "ErrImagePull"
	reasonImagePullBackOff = "ImagePullBackOff"
)

// Manager pulls one node's images (pkg/kubelet/images' imageManager):
// it asks the runtime whether an image is present, pulls it as the
// container's pull policy says, and holds back a pull that failed for
// its back-off. Its methods are safe for concurrent use.
type Manager struct {
	images   runtimeapi.ImageServiceClient
	recorder *record.Recorder
	clock    clock.Clock
	log      *slog.Logger
	// backOff delays the next pull of an image that failed, by pod and
	// image; retryAfter is when a pull that failed is tried again.
	backOff    *backoff.BackOff
	retryAfter time.Duration
	// pulled tells the node status that the runtime's images changed.
	pulled func()
	// observePull is told each successful pull's span, for the pod's
	// start SLI (kubelet/metrics), which leaves pulls out.
	observePull func(uid types.UID, start, end time.Time)

	mu         sync.Mutex
	pullErrors map[string]string // why the last pull failed, by pod and image
}

// NewManager returns the image manager of a node whose runtime serves
// images. Failed pulls back off as b says, the first retry after
// retryAfter; pulled is called after each pull, observePull with the pod
// and when the pull started and ended.
func NewManager(images runtimeapi.ImageServiceClient, b *backoff.BackOff, retryAfter time.Duration, pulled func(),
	observePull func(uid types.UID, start, end time.Time), recorder *record.Recorder, clk clock.Clock, log *slog.Logger) *Manager {
	return &Manager{images: images, backOff: b, retryAfter: retryAfter, pulled: pulled, observePull: observePull,
		recorder: recorder, clock: clk, log: log, pullErrors: map[string]string{}}
}

// Forget drops what the manager knows of the pod with uid: it is gone.
func (m *Manager) Forget(uid types.UID) {
	m.backOff.ForgetPod(string(uid))
	m.mu.Lock()
	defer m.mu.Unlock()
	for key := range m.pullErrors {
		if strings.HasPrefix(key, string(uid)+"_") {
			delete(m.pullErrors, key)
		}
	}
}

// imagePullBackOff is how long a failed pull waits before the next try,
// and why it failed.
func (m *Manager) imagePullBackOff(key string) (time.Duration, string) {
	remaining := m.backOff.WaitSinceUpdate(key)
	if remaining == 0 {
		return 0, ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return remaining, m.pullErrors[key]
}

// EnsureImage makes container c's image present, with the events `kubectl
// describe pod` shows: Pulling and Pulled, or Pulled "already present". It
// returns the image's ref (its ID) for CreateContainer or, if the image
// cannot be had, the waiting state to report instead, and when to sync
// the pod again (0: no need). sandbox is the pod's, for PullImage.
//
// The image is asked for as the pod spec names it; the runtime
// normalizes the name ("nginx:1.25" is docker.io/library/nginx:1.25).
func (m *Manager) EnsureImage(ctx context.Context, pod *corev1.Pod, c corev1.Container, sandbox *runtimeapi.PodSandboxConfig) (ref string, waiting *corev1.ContainerStateWaiting, requeueAfter time.Duration, err error) {
	spec := &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image}
	st, err := m.images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	if err != nil {
		return "", nil, 0, fmt.Errorf("image status %q: %w", c.Image, err)
	}
	present := st.GetImage() != nil
	if !shouldPull(c.ImagePullPolicy, present) {
		if present {
			m.recorder.Event(pod, corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
			return st.GetImage().GetId(), nil, 0, nil
		}
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		m.recorder.Event(pod, corev1.EventTypeWarning, ErrImageNeverPull, "%s", msg)
		m.log.Warn("cannot start container: image not present", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image)
		return "", &corev1.ContainerStateWaiting{Reason: ErrImageNeverPull, Message: msg}, 0, nil
	}
	// A pull that failed is not tried again before its back-off (10 s
	// doubling to 5 min, as the kubelet's image puller): meanwhile the
	// container is ImagePullBackOff.
	pullKey := string(pod.UID) + "_" + c.Image
	if remaining, lastErr := m.imagePullBackOff(pullKey); remaining > 0 {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		if kubetypes.ReportedWaiting(pod, c.Name) != reasonImagePullBackOff { // once per back-off
			m.recorder.Event(pod, corev1.EventTypeNormal, "BackOff", "%s", msg)
			m.recorder.Event(pod, corev1.EventTypeWarning, "Failed", "Error: %s", reasonImagePullBackOff)
		}
		return "", &corev1.ContainerStateWaiting{Reason: reasonImagePullBackOff, Message: msg + ": " + reasonErrImagePull + ": " + lastErr}, remaining, nil
	}
	m.recorder.Event(pod, corev1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	m.log.Info("pulling image", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image, "policy", c.ImagePullPolicy)
	start := m.clock.Now()
	pulled, err := m.images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec,
		SandboxConfig: sandbox})
	if st, ok := status.FromError(err); ok && err != nil && st.Code() != codes.Canceled && st.Code() != codes.Unavailable {
		// The registry said no: ErrImagePull, and the back-off starts.
		m.backOff.Next(pullKey, m.clock.Now())
		m.mu.Lock()
		m.pullErrors[pullKey] = err.Error()
		m.mu.Unlock()
		m.recorder.Event(pod, corev1.EventTypeWarning, "Failed", "Failed to pull image %q: %v", c.Image, err)
		m.recorder.Event(pod, corev1.EventTypeWarning, "Failed", "Error: %s", reasonErrImagePull)
		m.log.Warn("image pull failed", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image, "err", st.Message())
		return "", &corev1.ContainerStateWaiting{Reason: reasonErrImagePull, Message: err.Error()}, m.retryAfter, nil
	}
	if err != nil {
		return "", nil, 0, fmt.Errorf("pull image %q: %w", c.Image, err) // the runtime went away: retried
	}
	m.backOff.Forget(pullKey)
	m.pulled()
	end := m.clock.Now()
	m.observePull(pod.UID, start, end)
	took := end.Sub(start).Round(time.Millisecond)
	// The event gives the size, which PullImage does not: ImageStatus does.
	var size uint64
	if st, err := m.images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec}); err == nil {
		size = st.GetImage().GetSize()
	}
	m.log.Info("pulled image", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "image", c.Image, "took", took,
		"imageRef", pulled.GetImageRef(), "sizeBytes", size)
	// Pulls here never wait behind other pulls, hence the same time twice.
	m.recorder.Event(pod, corev1.EventTypeNormal, "Pulled",
		"Successfully pulled image %q in %s (%s including waiting). Image size: %d bytes.", c.Image, took, took, size)
	return pulled.GetImageRef(), nil, 0, nil
}
