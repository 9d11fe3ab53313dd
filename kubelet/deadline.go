package kubelet

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/eviction"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	"github.com/mkube/mkube/kubelet/status"
)

// A pod's spec.activeDeadlineSeconds bounds how long it may be active on
// the node, counted from status.startTime (when the kubelet took it): a
// Job's way to say "give up after N seconds". Past it the kubelet stops
// the pod's containers and fails the pod: phase Failed, reason
// DeadlineExceeded, whatever its restart policy.

const (
	reasonDeadlineExceeded  = "DeadlineExceeded"
	messageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// pastActiveDeadline reports whether pod has outlived its active
// deadline and, if not, how long it has left (0: it has none).
func (k *Kubelet) pastActiveDeadline(pod *corev1.Pod) (bool, time.Duration) {
	if pod.Spec.ActiveDeadlineSeconds == nil || pod.Status.StartTime == nil {
		return false, 0
	}
	left := pod.Status.StartTime.Add(time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second).Sub(k.clock.Now())
	return left <= 0, max(left, 0)
}

// failPod fails pod for f: it is reported Failed with f's reason and
// message at once (kubelet/status keeps f), as the kubelet does, and its
// running containers are stopped in the background, with their grace
// period; the pod's sandbox is released only after that (syncPod).
func (k *Kubelet) failPod(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, f status.Failure) error {
	if known := k.status.SetFailure(pod.UID, f); !known {
		k.recorder.Event(pod, corev1.EventTypeWarning, f.Reason, "%s", f.Message)
		k.log.Info("failing pod: "+f.Message, "pod", client.KeyOf(pod), "reason", f.Reason)
	}
	if sb != nil && anyRunning(sb) {
		k.inBackground(ctx, pod, "stopping a failed pod", func() error {
			if err := k.stopContainers(ctx, pod, sb, failureGracePeriod(f, pod)); err != nil {
				return err
			}
			// Report the stopped containers; the requeue then releases it.
			stopped, err := k.runtime.podSandbox(ctx, pod.UID)
			if err != nil {
				return err
			}
			_, err = k.reportStatus(ctx, pod, stopped, nil)
			return err
		})
	}
	_, err := k.reportStatus(ctx, pod, sb, nil)
	return err
}

// failureGracePeriod is the StopContainer timeout of the failed pod's
// containers: the pod's own, but eviction.GracePeriodSeconds for an
// evicted pod (the kubelet's minimum still applies).
func failureGracePeriod(f status.Failure, pod *corev1.Pod) int64 {
	if f.Reason == eviction.Reason {
		return kuberuntime.GracePeriod(ptr.To[int64](eviction.GracePeriodSeconds))
	}
	return kuberuntime.GracePeriod(pod.Spec.TerminationGracePeriodSeconds)
}

func anyRunning(sb *kubecontainer.PodSandbox) bool {
	for _, c := range sb.Containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return true
		}
	}
	return false
}
