package kubelet

// Termination, the pod worker's last act: a pod being deleted, failed or
// evicted has its containers stopped (preStop hooks, then the stop
// signal, then SIGKILL when its grace period is up), each pod by its own
// goroutine so that a slow stop holds no worker that other pods need.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	kubetypes "github.com/mkube/mkube/kubelet/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// terminate runs terminatePod for pod in the background (see
// inBackground): stopping containers waits out their grace periods.
func (k *Kubelet) terminate(ctx context.Context, pod *corev1.Pod) error {
	k.inBackground(ctx, pod, "pod termination", func() error { return k.terminatePod(ctx, pod) })
	return nil
}

// stopping is the pods whose containers are being stopped, each by its
// own goroutine (inBackground). The zero value is ready for use.
type stopping struct {
	mu   sync.Mutex
	pods map[types.UID]bool
}

// start marks the pod with uid as being stopped; false if it already was.
func (s *stopping) start(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pods[uid] {
		return false
	}
	if s.pods == nil {
		s.pods = map[types.UID]bool{}
	}
	s.pods[uid] = true
	return true
}

// done marks the stop of the pod with uid over.
func (s *stopping) done(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, uid)
}

// busy: a background stop of the pod's containers is under way.
func (s *stopping) busy(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pods[uid]
}

// inBackground runs fn for pod in its own goroutine, once at a time per
// pod: stopping containers waits out their grace periods (30 s for a
// `sleep` that ignores SIGTERM), which must not hold a worker that other
// pods need. When fn is done the pod is synced again; if it failed, after
// the queue's back-off.
func (k *Kubelet) inBackground(ctx context.Context, pod *corev1.Pod, what string, fn func() error) {
	if !k.terminating.start(pod.UID) {
		return
	}
	go func() {
		err := fn()
		k.terminating.done(pod.UID)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			k.log.Warn(what+" failed; retrying", "pod", client.KeyOf(pod), "err", err)
			k.queue.AddRateLimited(client.KeyOf(pod))
		default:
			k.queue.Add(client.KeyOf(pod))
		}
	}()
}

// stopContainers stops the pod's running containers, each with timeout
// grace: a server that handles SIGTERM exits at once, a PID 1 that does
// not is killed when the time is up. As Kubernetes orders it (KEP-753),
// the app containers stop first, all at once; then the sidecars, the
// last declared first, each once the ones after it have stopped, with
// what is left of the grace period: a sidecar (a proxy, a log shipper)
// serves the app containers until they are gone, preStop hooks
// included.
func (k *Kubelet) stopContainers(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, grace int64) error {
	start := k.clock.Now()
	var regular, sidecars []corev1.Container
	for _, c := range kubetypes.AllContainers(pod) {
		if kubetypes.IsSidecar(c) {
			sidecars = append(sidecars, c)
		} else {
			regular = append(regular, c)
		}
	}
	err := k.stopEach(ctx, pod, sb, regular, grace)
	for i := len(sidecars) - 1; i >= 0; i-- {
		// A sidecar is given at least the kubelet's minimum to stop,
		// however little of the pod's grace period the others left.
		left := max(grace-int64(k.clock.Since(start)/time.Second), kuberuntime.MinGracePeriod)
		err = errors.Join(err, k.stopEach(ctx, pod, sb, sidecars[i:i+1], left))
	}
	return err
}

// stopEach stops those of containers that run, all at once.
func (k *Kubelet) stopEach(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, containers []corev1.Container, grace int64) error {
	var stops sync.WaitGroup
	errs := make([]error, len(containers))
	for i, c := range containers {
		cur := sb.Containers[c.Name]
		if cur == nil || cur.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		k.recorder.Event(pod, corev1.EventTypeNormal, "Killing", "Stopping container %s", c.Name)
		stops.Go(func() { errs[i] = k.runtimeManager.KillContainer(ctx, pod, c, cur, grace) })
	}
	stops.Wait()
	return errors.Join(errs...)
}

// terminatePod finishes a graceful deletion (seed 003, the pod's end).
// `kubectl delete pod` made the API server only set deletionTimestamp;
// the kubelet now stops the containers, reports them terminated, and
// deletes the pod for good with gracePeriodSeconds=0. The UID precondition
// keeps it from deleting a new pod that took the same name meanwhile.
//
// The runtime stops each container with the deletion's grace period as
// StopContainer's timeout (stopContainers).
func (k *Kubelet) terminatePod(ctx context.Context, pod *corev1.Pod) error {
	key := client.KeyOf(pod)
	sb, err := k.runtime.podSandbox(ctx, pod.UID)
	if err != nil {
		return err // retried
	}
	if sb != nil {
		grace := kuberuntime.GracePeriod(pod.DeletionGracePeriodSeconds)
		k.log.Info("pod is being deleted: stopping its containers", "pod", key,
			"gracePeriodSeconds", ptr.Deref(pod.DeletionGracePeriodSeconds, 0))
		if err := k.stopContainers(ctx, pod, sb, grace); err != nil {
			return err // retried
		}
		if sb, err = k.runtime.podSandbox(ctx, pod.UID); err != nil {
			return err // retried
		}
		stored, err := k.reportStatus(ctx, pod, sb, nil)
		if err != nil {
			return err // retried
		}
		if stored == nil {
			// Absorbed: somebody deleted it already.
			return k.releasePod(ctx, pod, "pod is gone")
		}
	}
	err = k.client.Delete(ctx, client.Pods, pod.Namespace, pod.Name, &metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: ptr.To(pod.UID)},
	})
	switch {
	case err == nil:
		k.log.Info("deleted pod: graceful deletion finished", "pod", key, "uid", pod.UID)
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Absorbed: already deleted (by an earlier sync whose deletion the
		// informer has not seen yet), or replaced by a new pod of the same
		// name. Either way this pod is over.
		k.log.Debug("pod already deleted", "pod", key, "uid", pod.UID)
	default:
		return fmt.Errorf("delete pod: %w", err) // retried
	}
	return k.releasePod(ctx, pod, "pod deleted") // an error is retried
}
