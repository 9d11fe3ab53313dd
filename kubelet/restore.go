package kubelet

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/kubelet/fakeruntime"
)

// restorePods takes back the pods this node ran before the kubelet
// restarted. Run calls it once the informer has listed the node's pods and
// before any worker starts, so that no new pod takes an old pod's IP.
func (k *Kubelet) restorePods() {
	for _, obj := range k.informer.Cache().List() {
		pod := obj.(*corev1.Pod) // only read
		if err := k.restorePod(pod); err != nil {
			// syncPod will start it as a new pod, with a new IP.
			k.log.Warn("could not take back pod", "pod", client.KeyOf(pod), "err", err)
		}
	}
}

// restorePod takes back one pod, if it ran here.
//
// A real node's containers keep running while the kubelet restarts, and
// the new kubelet finds them in the container runtime. The fake runtime
// lived in the old kubelet's memory, so its state is rebuilt from the
// pod's status, which the old kubelet reported: the sandbox with its pod
// IP, and each container that was running or had exited, with its ID,
// start time and restart count. Then the pod's next status is the one it
// already has, and nothing is written. A finished pod has nothing left to
// take back.
func (k *Kubelet) restorePod(pod *corev1.Pod) error {
	if _, ok := k.containerRuntime.PodSandboxStatus(pod.UID); ok || !ranHere(pod) || podFinished(pod) {
		return nil
	}
	var containers []fakeruntime.Container
	for _, cs := range pod.Status.ContainerStatuses {
		c, ok := containerFromStatus(cs)
		if !ok {
			continue
		}
		containers = append(containers, c)
		if _, present := k.containerRuntime.ImageStatus(cs.Image); !present {
			k.containerRuntime.AddImage(fakeruntime.NewImage(cs.Image)) // it ran, so its image is here
		}
	}
	ip, _ := netip.ParseAddr(pod.Status.PodIP)
	created := k.clock.Now()
	if pod.Status.StartTime != nil {
		created = pod.Status.StartTime.Time
	}
	sb, err := k.containerRuntime.RestorePodSandbox(
		fakeruntime.PodRef{UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name}, ip, containers, created)
	if err != nil {
		return err
	}
	k.log.Info("took back a pod that ran here before the kubelet restarted", "pod", client.KeyOf(pod),
		"podIP", sb.IP.String(), "containers", len(containers))
	return nil
}

// podFinished: nothing of the pod runs any more, and nothing will.
func podFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// ranHere: the pod got a sandbox (an IP) or a container from an earlier
// kubelet.
func ranHere(pod *corev1.Pod) bool {
	if pod.Status.PodIP != "" {
		return true
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.ContainerID != "" {
			return true
		}
	}
	return false
}

// containerFromStatus is the runtime record a reported container status
// describes; containers that never got created have none.
func containerFromStatus(cs corev1.ContainerStatus) (fakeruntime.Container, bool) {
	c := fakeruntime.Container{Name: cs.Name, ID: cs.ContainerID, Image: cs.Image, ImageID: cs.ImageID, Attempt: cs.RestartCount}
	switch {
	case cs.ContainerID == "":
		return c, false
	case cs.State.Running != nil:
		c.State, c.StartedAt = fakeruntime.ContainerRunning, cs.State.Running.StartedAt.Time
	case cs.State.Terminated != nil:
		c.State = fakeruntime.ContainerExited
		setTerminated(&c, cs.State.Terminated)
	default:
		c.State = fakeruntime.ContainerCreated
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		prev := fakeruntime.Container{Name: cs.Name, ID: t.ContainerID, Image: cs.Image, ImageID: cs.ImageID,
			State: fakeruntime.ContainerExited, Attempt: max(cs.RestartCount-1, 0)}
		setTerminated(&prev, t)
		c.Previous = &prev
	}
	return c, true
}

func setTerminated(c *fakeruntime.Container, t *corev1.ContainerStateTerminated) {
	c.StartedAt, c.FinishedAt, c.ExitCode, c.Reason = t.StartedAt.Time, t.FinishedAt.Time, t.ExitCode, t.Reason
}
