package kubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/seedstep"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// reportStatus is step 13 seen from the kubelet (its status manager): it
// computes the pod's status from the runtime and, if that differs from the
// pod's current status, writes it with PUT pods/NAME/status; the API
// server stores it in etcd.
//
// The write carries the pod's resourceVersion, so it fails with 409
// Conflict if somebody wrote the pod since it was read (the informer's copy
// may also just be behind our own last write). Then the pod is read again
// and the status recomputed against it, up to five times 10ms apart
// (client-go's retry.DefaultRetry); after that the error sends the pod
// back to the work queue.
//
// It returns the pod as now stored, or nil if the pod is gone or was
// replaced by a new pod of the same name.
func (k *Kubelet) reportStatus(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, waiting map[string]*corev1.ContainerStateWaiting) (*corev1.Pod, error) {
	var stored *corev1.Pod
	k.applyProbeResults(pod, sb)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		status := generatePodStatus(pod, sb, waiting, k.cfg.NodeIP, k.clock.Now())
		alloc, pendingResize := k.allocation(pod)
		setResourceStatus(&status, alloc, sb, pendingResize, metav1.NewTime(k.clock.Now()).Rfc3339Copy()) // resize.go
		if f, failed := k.failure(pod.UID); failed {
			// The kubelet failed the pod itself (activeDeadlineSeconds).
			status.Phase, status.Reason, status.Message = corev1.PodFailed, f.reason, f.message
		}
		if equality.Semantic.DeepEqual(pod.Status, status) {
			stored = pod
			return nil
		}
		next := pod.DeepCopy()
		next.Status = status
		next.UID = k.apiUID(pod.UID) // a static pod's status goes to its mirror
		out := &corev1.Pod{}
		err := k.client.UpdateStatus(ctx, client.Pods, pod.Namespace, pod.Name, next, out)
		if apierrors.IsConflict(err) {
			fresh, gerr := k.getPod(ctx, pod)
			if gerr != nil {
				return gerr
			}
			pod = fresh
			return err // retried against the fresh pod
		}
		if err != nil {
			return fmt.Errorf("update pod status: %w", err)
		}
		k.log.Info("reported pod status", seedstep.Key, seedstep.PodStatusStored, "pod", client.KeyOf(out), "phase", status.Phase,
			"podIP", status.PodIP, "ready", readyStatus(next), "rv", out.ResourceVersion)
		out.SetGroupVersionKind(podGVK)
		out.UID = pod.UID
		stored = out
		return nil
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return stored, err
}

// getPod reads the pod afresh; a pod of the same name but another UID is
// reported as NotFound, since the pod we knew is gone.
func (k *Kubelet) getPod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	fresh := &corev1.Pod{}
	if err := k.client.Get(ctx, client.Pods, pod.Namespace, pod.Name, fresh); err != nil {
		return nil, err
	}
	if fresh.UID != k.apiUID(pod.UID) {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
	}
	fresh.UID = pod.UID
	if isMirror(fresh) {
		// The static pod's spec is the mirror's; it was not changed.
		fresh.Spec = pod.Spec
	}
	fresh.SetGroupVersionKind(podGVK)
	return fresh, nil
}

// readyStatus is the status of the pod's Ready condition, Unknown if it
// has none.
func readyStatus(pod *corev1.Pod) corev1.ConditionStatus {
	if c := podcondition.Get(pod, corev1.PodReady); c != nil {
		return c.Status
	}
	return corev1.ConditionUnknown
}
