package kubelet

import (
	"context"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The pod lifecycle event generator (PLEG): how the kubelet learns that a
// container exited on its own, which no API object tells it. mkube's
// kubelet is the evented PLEG: it reads the runtime's GetContainerEvents
// stream and syncs the pod of each container that started or stopped,
// where the real kubelet's default relists every container each second.
// Each sync then asks the runtime for the pod's state (runtimepod.go), so
// an event is only a nudge and a duplicate is harmless.

// plegRetryPeriod is how long the kubelet waits before it opens the
// stream again after it broke.
const plegRetryPeriod = time.Second

// watchContainerEvents follows the runtime's container events until ctx
// ends. After the stream broke, every pod is synced once: an event may
// have been missed meanwhile.
func (f *Fleet) watchContainerEvents(ctx context.Context) {
	k0 := f.kubelets[0]
	for ctx.Err() == nil {
		stream, err := f.runtime.runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
		for err == nil {
			var ev *runtimeapi.ContainerEventResponse
			if ev, err = stream.Recv(); err == nil {
				f.onContainerEvent(ev)
			}
		}
		if ctx.Err() != nil {
			return
		}
		if err != io.EOF {
			k0.log.Warn("PLEG: container events broke off; resyncing every pod", "err", err)
		}
		for _, obj := range f.informer.Cache().List() {
			f.route(obj)
		}
		select {
		case <-ctx.Done():
		case <-k0.clock.After(plegRetryPeriod):
		}
	}
}

// onContainerEvent queues the sync of the event's pod, on its node.
func (f *Fleet) onContainerEvent(ev *runtimeapi.ContainerEventResponse) {
	md := ev.GetPodSandboxStatus().GetMetadata()
	if md.GetName() == "" {
		return // not a pod's container (crictl's own)
	}
	key := md.GetNamespace() + "/" + md.GetName()
	k := f.kubeletOf(key, ev.GetPodSandboxStatus().GetLabels())
	if k == nil {
		return // another kubelet's, or a pod gone
	}
	k.containersChanged()
	switch ev.GetContainerEventType() {
	case runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT:
		k.log.Info("PLEG: container died: syncing its pod", "pod", key, "containerID", k.runtime.containerID(ev.GetContainerId()))
	default:
		k.log.Debug("PLEG: container event", "pod", key, "event", ev.GetContainerEventType(), "containerID", k.runtime.containerID(ev.GetContainerId()))
	}
	k.queue.Add(key)
}
