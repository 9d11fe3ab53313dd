package prober

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// What the kubelet does with probe results: an event for every failed
// run, a kill for a failed liveness or startup probe, and the pod's
// status reported again when a result changes (upstream, the kubelet's
// syncPod reading the liveness and startup result managers, and
// prober.go recording events). The sandbox's side is in manager.go's
// SyncSandbox and UpdatePodStatus.

// OnFailedRun is every failed run's event (reason Unhealthy), as
// the kubelet records them, thresholds or not.
func (r *Prober) OnFailedRun(t Target, output string) {
	r.Recorder.Event(t.Pod, corev1.EventTypeWarning, "Unhealthy", "%s probe failed: %s", t.Kind, strings.TrimRight(output, "\n"))
}

// OnChange acts on a probe's new result: a failed liveness or
// startup probe kills the container, which restarts as its policy says
// (seed 003 §十); any change makes the pod's status be reported again
// (its container's ready or started).
func (r *Prober) OnChange(ctx context.Context, ch Change) {
	key := client.KeyOf(ch.Pod)
	if ch.Result == Failure && ch.Kind != Readiness {
		r.Recorder.Event(ch.Pod, corev1.EventTypeNormal, "Killing", "Container %s failed %s probe, will be restarted", ch.Container.Name, strings.ToLower(string(ch.Kind)))
		r.Log.Info(string(ch.Kind)+" probe failed: killing the container", "pod", key, "container", ch.Container.Name,
			"output", strings.TrimRight(ch.Output, "\n"))
		grace := ch.Pod.Spec.TerminationGracePeriodSeconds
		if s := ch.Probe.TerminationGracePeriodSeconds; s != nil {
			grace = s // the probe's own, for a container that must go quickly
		}
		go func() { // a kill waits out the grace period: not on the prober's goroutine
			rc := &kubecontainer.Container{RawID: ch.ID, Name: ch.Container.Name, State: runtimeapi.ContainerState_CONTAINER_RUNNING}
			if err := r.Kill(ctx, ch.Pod, ch.Container, rc, grace); err != nil && ctx.Err() == nil {
				r.Log.Warn("could not kill the container its probe failed", "pod", key, "container", ch.Container.Name, "err", err)
			}
		}()
		return
	}
	r.Log.Info(string(ch.Kind)+" probe: container is now "+probeOutcome(ch), "pod", key, "container", ch.Container.Name)
	r.Resync(key)
}

func probeOutcome(ch Change) string {
	switch {
	case ch.Kind == Startup:
		return "started"
	case ch.Result == Success:
		return "ready"
	}
	return "not ready"
}
