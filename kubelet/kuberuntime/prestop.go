package kuberuntime

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// KillContainer stops a running container as the kubelet's killContainer
// does: its preStop hook first, if it has one (an exec command run in the
// container, an HTTP GET of one of its ports, or a sleep: lifecyclehooks.go),
// given at most the grace period; then the stop signal with what is left
// of the grace period (at least 2 s), and SIGKILL when that is up.
func (m *Manager) KillContainer(ctx context.Context, pod *corev1.Pod, spec corev1.Container, cur *kubecontainer.Container, grace int64) error {
	if hook := spec.Lifecycle; hook != nil && hook.PreStop != nil {
		start := m.Clock.Now()
		hctx, cancel := context.WithTimeout(ctx, time.Duration(grace)*time.Second)
		msg, err := m.runHook(hctx, pod, spec, cur.RawID, pod.Status.PodIP, hook.PreStop)
		cancel()
		if err != nil {
			m.Recorder.Event(pod, corev1.EventTypeWarning, "FailedPreStopHook", "%s", msg)
			m.Log.Info("preStop hook failed", "pod", client.KeyOf(pod), "container", spec.Name, "err", err)
		} else {
			m.Log.Info("ran preStop hook", "pod", client.KeyOf(pod), "container", spec.Name, "took", m.Clock.Since(start).Round(time.Millisecond))
		}
		grace = max(grace-int64(m.Clock.Since(start).Seconds()), MinGracePeriod)
	}
	return m.StopContainer(ctx, cur, grace)
}
