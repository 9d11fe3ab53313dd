package kubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/kubelet/fakeruntime"
)

// runPod is seed step 12 proper: "the kubelet calls the container runtime
// to start the containers, and sends the pod's and the containers' status
// back to the API server". A pod new to the node goes through:
//
//  1. report ContainerCreating, so users see the kubelet took the pod;
//  2. create the pod sandbox, which gives the pod its IP;
//  3. per container: pull the image if the policy says so, create, start;
//  4. report the result: Running and Ready (step 13).
//
// On later syncs only what differs from the spec is redone: a container
// whose image was changed is stopped and started again with the new one
// (seed 000: "if the image was upgraded, the kubelet fetches the latest
// image and loads it").
func (k *Kubelet) runPod(ctx context.Context, pod *corev1.Pod) error {
	key := client.KeyOf(pod)
	ref := fakeruntime.PodRef{UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name}
	sb, ok := k.containerRuntime.PodSandboxStatus(pod.UID)
	if !ok {
		k.log.Info("pod bound to this node: starting it", seedstep.Key, seedstep.KubeletStartsPod, "pod", key, "containers", len(pod.Spec.Containers))
		stored, err := k.reportStatus(ctx, pod, nil, nil)
		if err != nil || stored == nil {
			return err // retried, or absorbed: the pod is gone
		}
		pod = stored
		if sb, err = k.containerRuntime.RunPodSandbox(ref); err != nil {
			return err // retried: another pod may free an IP
		}
		k.log.Info("created pod sandbox", seedstep.Key, seedstep.KubeletStartsPod, "pod", key, "podIP", sb.IP.String())
	}
	waiting := map[string]*corev1.ContainerStateWaiting{}
	for _, c := range pod.Spec.Containers {
		w, err := k.syncContainer(ctx, pod, c)
		if err != nil {
			return err // retried
		}
		if w != nil {
			waiting[c.Name] = w
		}
	}
	sb, _ = k.containerRuntime.PodSandboxStatus(pod.UID)
	_, err := k.reportStatus(ctx, pod, &sb, waiting)
	return err
}

// syncContainer makes container c run with the image its spec names. It
// returns a waiting state if c cannot start for now.
func (k *Kubelet) syncContainer(ctx context.Context, pod *corev1.Pod, c corev1.Container) (*corev1.ContainerStateWaiting, error) {
	key := client.KeyOf(pod)
	cur, exists := k.container(pod, c.Name)
	if exists && cur.State == fakeruntime.ContainerRunning {
		if cur.Image == c.Image {
			return nil, nil // nothing to do: the common case
		}
		k.recorder.Event(pod, corev1.EventTypeNormal, "Killing", "Container %s definition changed, will be restarted", c.Name)
		k.log.Info("image changed: restarting container", seedstep.Key, seedstep.KubeletStartsPod, "pod", key, "container", c.Name, "from", cur.Image, "to", c.Image)
		k.containerRuntime.WriteLog(cur.ID, fmt.Sprintf("received SIGTERM: the kubelet replaces this container, whose image changed to %s", c.Image))
		if _, err := k.containerRuntime.StopContainer(pod.UID, c.Name); err != nil {
			return nil, err
		}
	}
	if !exists || cur.State != fakeruntime.ContainerCreated {
		if w, err := k.ensureImage(ctx, pod, c); w != nil || err != nil {
			return w, err
		}
		created, err := k.containerRuntime.CreateContainer(pod.UID, c.Name, c.Image)
		if err != nil {
			return nil, err
		}
		k.recorder.Event(pod, corev1.EventTypeNormal, "Created", "Created container: %s", c.Name)
		cur = created
	}
	started, err := k.containerRuntime.StartContainer(pod.UID, c.Name)
	if err != nil {
		return nil, err
	}
	k.writeStartLog(pod, c, started)
	k.recorder.Event(pod, corev1.EventTypeNormal, "Started", "Started container %s", c.Name)
	k.log.Info("started container", seedstep.Key, seedstep.KubeletStartsPod, "pod", key, "container", c.Name, "image", c.Image, "containerID", cur.ID)
	return nil, nil
}

// container returns the runtime's record of the pod's container name.
func (k *Kubelet) container(pod *corev1.Pod, name string) (fakeruntime.Container, bool) {
	sb, ok := k.containerRuntime.PodSandboxStatus(pod.UID)
	if !ok {
		return fakeruntime.Container{}, false
	}
	c, ok := sb.Containers[name]
	return c, ok
}

// terminatePod finishes a graceful deletion (seed 003, the pod's end).
// `kubectl delete pod` made the API server only set deletionTimestamp;
// the kubelet now stops the containers, reports them terminated, and
// deletes the pod for good with gracePeriodSeconds=0. The UID precondition
// keeps it from deleting a new pod that took the same name meanwhile.
//
// A real kubelet would give the containers up to the grace period to
// exit; fake containers exit at once, so there is nothing to wait for.
func (k *Kubelet) terminatePod(ctx context.Context, pod *corev1.Pod) error {
	key := client.KeyOf(pod)
	if sb, ok := k.containerRuntime.PodSandboxStatus(pod.UID); ok {
		k.log.Info("pod is being deleted: stopping its containers", "pod", key,
			"gracePeriodSeconds", ptr.Deref(pod.DeletionGracePeriodSeconds, 0))
		for _, c := range pod.Spec.Containers {
			cur, ok := sb.Containers[c.Name]
			if !ok || cur.State != fakeruntime.ContainerRunning {
				continue
			}
			k.recorder.Event(pod, corev1.EventTypeNormal, "Killing", "Stopping container %s", c.Name)
			k.containerRuntime.WriteLog(cur.ID, fmt.Sprintf("received SIGTERM: the pod is being deleted (grace period %ds); exiting with code 0",
				ptr.Deref(pod.DeletionGracePeriodSeconds, 0)))
			if _, err := k.containerRuntime.StopContainer(pod.UID, c.Name); err != nil {
				return err
			}
		}
		sb, _ = k.containerRuntime.PodSandboxStatus(pod.UID)
		stored, err := k.reportStatus(ctx, pod, &sb, nil)
		if err != nil {
			return err // retried
		}
		if stored == nil {
			k.releasePod(pod, "pod is gone")
			return nil // absorbed: somebody deleted it already
		}
	}
	err := k.client.Delete(ctx, client.Pods, pod.Namespace, pod.Name, &metav1.DeleteOptions{
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
	k.releasePod(pod, "pod deleted")
	return nil
}
