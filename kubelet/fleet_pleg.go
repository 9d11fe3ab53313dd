package kubelet

import (
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fleetEvents is the fleet's side of the PLEG (package pleg): a
// container event syncs the container's pod, on its node.
type fleetEvents struct{ f *Fleet }

// OnContainerEvent queues the sync of the event's pod, on its node.
func (e fleetEvents) OnContainerEvent(ev *runtimeapi.ContainerEventResponse) {
	md := ev.GetPodSandboxStatus().GetMetadata()
	if md.GetName() == "" {
		return // not a pod's container (crictl's own)
	}
	key := md.GetNamespace() + "/" + md.GetName()
	k := e.f.kubeletOf(key, ev.GetPodSandboxStatus().GetLabels())
	if k == nil {
		return // another kubelet's, or a pod gone
	}
	k.nodeStatus.ContainersChanged()
	switch ev.GetContainerEventType() {
	case runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT:
		k.log.Info("PLEG: container died: syncing its pod", "pod", key, "containerID", k.runtime.containerID(ev.GetContainerId()))
	default:
		k.log.Debug("PLEG: container event", "pod", key, "event", ev.GetContainerEventType(), "containerID", k.runtime.containerID(ev.GetContainerId()))
	}
	k.queue.Add(key)
}

// Relist syncs every pod of the fleet once.
func (e fleetEvents) Relist() {
	for _, obj := range e.f.informer.Cache().List() {
		e.f.route(obj)
	}
}
