package kubelet

import (
	"context"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/cri"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	kubetypes "github.com/mkube/mkube/kubelet/types"
)

// After a restart the kubelet takes back the pods this node ran.
//
// With an external runtime there is nothing to do: the runtime outlived
// the kubelet, as containerd does, and each sync finds the pod's sandbox
// and containers by their labels (kubelet/kuberuntime's PodReader).
//
// The in-process runtime died with the old kubelet, so its state is
// rebuilt from what the API server remembers: the images the node
// reported, and each pod's sandbox with its IP and its containers with
// their IDs, start times and restart counts, from the pod's status. Then
// the pod's next status is the one it already has, and nothing is
// written. Run does this once the informer has listed the node's pods and
// before any worker starts, so that no new pod takes an old pod's IP.

// restoreImages puts back the images the node reported before.
func (k *Kubelet) restoreImages(images []corev1.ContainerImage) {
	if k.runtime.inProcess == nil {
		return
	}
	for _, img := range images {
		if len(img.Names) == 0 {
			continue
		}
		if err := k.runtime.inProcess.RestoreImage(img.Names[0]); err != nil {
			k.log.Warn("could not restore image", "image", img.Names[0], "err", err)
		}
	}
}

// restorePods takes back the pods of the node's earlier kubelet. Those
// that may still run hold their resources and ports before any new pod
// is admitted (admission.go), whatever the runtime.
func (k *Kubelet) restorePods(ctx context.Context) {
	pods := k.fleet.podsOf(k.cfg.NodeName)
	for _, pod := range pods {
		if ranHere(pod) && !kubetypes.PodFinished(pod) && !kubetypes.IsMirrorPod(pod) {
			k.admission.NoteAdmitted(pod)
		}
	}
	if k.runtime.inProcess == nil {
		return
	}
	for _, pod := range pods {
		if kubetypes.IsMirrorPod(pod) { // a static pod ran under its hash
			pod = pod.DeepCopy()
			pod.UID = kubetypes.RuntimeUID(pod)
		}
		if err := k.restorePod(ctx, pod); err != nil {
			// syncPod will start it as a new pod, with a new IP.
			k.log.Warn("could not take back pod", "pod", client.KeyOf(pod), "err", err)
		}
	}
}

// restorePod takes back one pod, if it ran here and may still run. A
// finished pod has nothing left to take back.
func (k *Kubelet) restorePod(ctx context.Context, pod *corev1.Pod) error {
	if !ranHere(pod) || kubetypes.PodFinished(pod) {
		return nil
	}
	if sb, err := k.runtime.podSandbox(ctx, pod.UID); sb != nil || err != nil {
		return err
	}
	var containers []cri.RestoredContainer
	for _, cs := range pod.Status.ContainerStatuses {
		if err := k.runtime.inProcess.RestoreImage(cs.Image); err != nil { // it ran, so its image is here
			return err
		}
		containers = append(containers, restoredContainers(pod, cs, k.restoredEnv(ctx, pod))...)
	}
	ip, _ := netip.ParseAddr(pod.Status.PodIP)
	created := k.clock.Now()
	if pod.Status.StartTime != nil {
		created = pod.Status.StartTime.Time
	}
	if _, err := k.runtime.inProcess.RestoreSandbox(k.runtimeManager.Configs.SandboxConfig(pod, 0), ip, created, containers); err != nil {
		return err
	}
	k.log.Info("took back a pod that ran here before the kubelet restarted", "pod", client.KeyOf(pod),
		"podIP", pod.Status.PodIP, "containers", len(containers))
	return nil
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

// restoredContainers are the runtime records a reported container status
// describes: the current instance and, if it restarted, the one before
// (lastState). A container that never got created has none.
func restoredContainers(pod *corev1.Pod, cs corev1.ContainerStatus, env func(corev1.Container) []corev1.EnvVar) []cri.RestoredContainer {
	if cs.ContainerID == "" {
		return nil
	}
	attempt := uint32(max(cs.RestartCount, 0))
	cur := cri.RestoredContainer{ID: kubecontainer.RawContainerID(cs.ContainerID), Config: restoredConfig(pod, cs, attempt, env)}
	switch {
	case cs.State.Running != nil:
		cur.State, cur.StartedAt = runtimeapi.ContainerState_CONTAINER_RUNNING, cs.State.Running.StartedAt.Time
	case cs.State.Terminated != nil:
		setTerminated(&cur, cs.State.Terminated)
	default:
		cur.State = runtimeapi.ContainerState_CONTAINER_CREATED
	}
	out := []cri.RestoredContainer{cur}
	if t := cs.LastTerminationState.Terminated; t != nil && t.ContainerID != "" && attempt > 0 {
		prev := cri.RestoredContainer{ID: kubecontainer.RawContainerID(t.ContainerID), Config: restoredConfig(pod, cs, attempt-1, env)}
		setTerminated(&prev, t)
		out = append(out, prev)
	}
	return out
}

// restoredConfig is the config the container was created with, as far as
// the status tells: the spec's container, with the image it ran and its
// environment made again (env; nil for none).
func restoredConfig(pod *corev1.Pod, cs corev1.ContainerStatus, attempt uint32, env func(corev1.Container) []corev1.EnvVar) *runtimeapi.ContainerConfig {
	c := corev1.Container{Name: cs.Name}
	for _, sc := range pod.Spec.Containers {
		if sc.Name == cs.Name {
			c = sc
		}
	}
	c.Image = cs.Image
	var vars []corev1.EnvVar
	if env != nil {
		vars = env(c)
	}
	return criConfigs("").ContainerConfig(pod, c, attempt, cs.Image, vars) // managers.go
}

// restoredEnv makes a restored container's environment as its creation
// did, with the pod's IP from its status; if that is not possible now (a
// ConfigMap was deleted since), only the image's.
func (k *Kubelet) restoredEnv(ctx context.Context, pod *corev1.Pod) func(corev1.Container) []corev1.EnvVar {
	return func(c corev1.Container) []corev1.EnvVar {
		env, err := k.env.ContainerEnv(ctx, pod, &kubecontainer.PodSandbox{IP: pod.Status.PodIP}, c)
		if err != nil {
			k.log.Warn("restored container runs without its environment", "pod", client.KeyOf(pod), "container", c.Name, "err", err)
			return nil
		}
		return env
	}
}

func setTerminated(c *cri.RestoredContainer, t *corev1.ContainerStateTerminated) {
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.StartedAt, c.FinishedAt, c.ExitCode, c.Reason = t.StartedAt.Time, t.FinishedAt.Time, t.ExitCode, t.Reason
}
