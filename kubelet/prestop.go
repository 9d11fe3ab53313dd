package kubelet

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/proto/runtimev1"
)

// killContainer stops a running container as the kubelet's killContainer
// does: its preStop hook first, if it has one (an exec command run in the
// container, an HTTP GET of one of its ports, or a sleep), given at most
// the grace period; then the stop signal with what is left of the grace
// period (at least 2 s), and SIGKILL when that is up.
func (k *Kubelet) killContainer(ctx context.Context, pod *corev1.Pod, spec corev1.Container, cur *runtimeContainer, grace int64) error {
	if hook := spec.Lifecycle; hook != nil && hook.PreStop != nil {
		start := k.clock.Now()
		if err := k.runPreStop(ctx, cur, hook.PreStop, grace); err != nil {
			k.recorder.Event(pod, corev1.EventTypeWarning, "FailedPreStopHook", "PreStopHook failed: %v", err)
			k.log.Info("preStop hook failed", "pod", client.KeyOf(pod), "container", spec.Name, "err", err)
		} else {
			k.log.Info("ran preStop hook", "pod", client.KeyOf(pod), "container", spec.Name, "took", k.clock.Since(start).Round(time.Millisecond))
		}
		grace = max(grace-int64(k.clock.Since(start).Seconds()), minGracePeriod)
	}
	return k.stopContainer(ctx, cur, grace)
}

// runPreStop runs one preStop handler within timeout seconds.
func (k *Kubelet) runPreStop(ctx context.Context, cur *runtimeContainer, h *corev1.LifecycleHandler, timeout int64) error {
	switch {
	case h.Exec != nil:
		resp, err := k.runtime.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: cur.RawID, Cmd: h.Exec.Command, Timeout: timeout})
		if err != nil {
			return err
		}
		if resp.GetExitCode() != 0 {
			out := strings.TrimSpace(string(resp.GetStdout()) + string(resp.GetStderr()))
			return fmt.Errorf("command '%s' exited with %d: %s", strings.Join(h.Exec.Command, " "), resp.GetExitCode(), out)
		}
		return nil
	case h.Sleep != nil:
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-k.clock.After(time.Duration(h.Sleep.Seconds) * time.Second):
			return nil
		}
	case h.HTTPGet != nil:
		// No packet leaves a simulated node: the GET succeeds if the
		// container's process listens on the port.
		port := h.HTTPGet.Port.IntValue()
		proc, err := k.runtime.faults.InspectProcess(ctx, &runtimev1.InspectProcessRequest{ContainerId: cur.RawID})
		if err != nil {
			return err
		}
		for _, p := range proc.GetListeningPorts() {
			if int(p) == port {
				return nil
			}
		}
		return fmt.Errorf("Get \"http://%s:%d%s\": dial tcp: connect: connection refused", "localhost", port, h.HTTPGet.Path)
	}
	return fmt.Errorf("a preStop handler needs exec, httpGet or sleep")
}
