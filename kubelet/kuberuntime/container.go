package kuberuntime

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// CreateContainer creates the attempt-th instance of c in the pod's
// sandbox sb (the first half of kuberuntime's startContainer): its
// config from the image imageRef with the environment env, the files the
// kubelet binds beside its volumes, then CreateContainer. cur is the
// instance the new one replaces, nil for the first: the one before it
// goes once the new one exists (removeOlderContainers).
func (m *Manager) CreateContainer(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, c corev1.Container,
	cur *kubecontainer.Container, attempt uint32, imageRef string, env []corev1.EnvVar) (string, error) {
	cfg := m.Configs.ContainerConfig(pod, c, attempt, imageRef, env)
	mounts, err := m.KubeletMounts(pod, sb, c) // /etc/hosts, the termination log
	if err != nil {
		return "", fmt.Errorf("create container %s: %w", c.Name, err) // retried
	}
	cfg.Mounts = append(cfg.Mounts, mounts...)
	resp, err := m.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.ID,
		Config: cfg, SandboxConfig: m.Configs.SandboxConfig(pod, sb.Attempt)})
	if err != nil {
		return "", fmt.Errorf("create container %s: %w", c.Name, err)
	}
	id := resp.GetContainerId()
	m.Recorder.Event(pod, corev1.EventTypeNormal, "Created", "Created container: %s", c.Name)
	if cur != nil {
		m.removeOlderContainers(ctx, cur)
	}
	return id, nil
}

// StartContainer starts c's created instance id in the pod whose IP is
// podIP, then runs its postStart hook (the second half of kuberuntime's
// startContainer).
func (m *Manager) StartContainer(ctx context.Context, pod *corev1.Pod, c corev1.Container, id, podIP string) error {
	if _, err := m.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		return fmt.Errorf("start container %s: %w", c.Name, err)
	}
	m.Recorder.Event(pod, corev1.EventTypeNormal, "Started", "Started container %s", c.Name)
	m.Log.Info("started container", seedstep.Key, seedstep.KubeletStartsPod, "pod", client.KeyOf(pod), "container", c.Name, "image", c.Image, "containerID", m.ContainerID(id))
	return m.RunPostStart(ctx, pod, c, id, podIP) // lifecyclehooks.go
}

// removeOlderContainers removes the dead instances of a container that
// its new instance makes too old to show: the kubelet keeps the one
// before the current (lastState, `kubectl logs --previous`), here the
// instance cur that was just replaced, and removes what came before it
// (its garbage collector's MaxPerPodContainer is 1). A failure is only
// logged: the next restart tries again.
func (m *Manager) removeOlderContainers(ctx context.Context, cur *kubecontainer.Container) {
	old := cur.Older
	if cur.Previous != nil {
		old = append(old, cur.Previous.RawID)
	}
	for _, id := range old {
		if _, err := m.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
			m.Log.Warn("could not remove a dead container", "container", cur.Name, "id", id, "err", err)
		}
	}
}
