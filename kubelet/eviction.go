package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/kubelet/status"
	kubetypes "github.com/mkube/mkube/kubelet/types"
	"github.com/mkube/mkube/kubelet/volumemanager"
)

// The kubelet's eviction manager, its local-storage part (Kubernetes'
// LocalStorageCapacityIsolation, localStorageEviction): every
// EvictionMonitoringPeriod it measures the local storage of each running
// pod that limits it (eviction_usage.go), and evicts a pod that uses more
// than a limit. The checks, in Kubernetes' order, the first that fails
// deciding the message:
//
//  1. an emptyDir on the disk holds more than its sizeLimit:
//     `Usage of EmptyDir volume "cache" exceeds the limit "1Ki". `
//  2. the pod uses more than the sum of its containers'
//     ephemeral-storage limits (its writable layers and logs, its
//     emptyDirs on the disk, its configMap volumes):
//     `Pod ephemeral local storage usage exceeds the total limit of containers 2Ki. `
//  3. a container's writable layer and logs exceed its own limit:
//     `Container app exceeded its local ephemeral storage limit "1Ki". `
//
// Each message ends with a space, as Kubernetes writes them. Evicting
// fails the pod at once: phase Failed, reason Evicted, the message, a
// Warning event Evicted with it, and its containers stopped with a 1 s
// grace period (2 s: the kubelet's minimum). `kubectl get pods` shows
// STATUS Evicted (status.reason), and a ReplicaSet replaces the pod, as
// any Failed one. Static pods are never evicted (Kubernetes counts them
// critical), nor is an emptyDir of medium Memory measured: its tmpfs is
// sized to its sizeLimit and refuses to grow past it (kubelet/volumemanager).

// DefaultEvictionMonitoringPeriod is Kubernetes' evictionMonitoringPeriod,
// how often its eviction manager runs: a pod may run over a limit for
// that long before it is evicted.
const DefaultEvictionMonitoringPeriod = 10 * time.Second

// The eviction manager's reason and messages (pkg/kubelet/eviction).
const (
	reasonEvicted                       = "Evicted"
	emptyDirMessageFmt                  = "Usage of EmptyDir volume %q exceeds the limit %q. "
	podEphemeralStorageMessageFmt       = "Pod ephemeral local storage usage exceeds the total limit of containers %s. "
	containerEphemeralStorageMessageFmt = "Container %s exceeded its local ephemeral storage limit %q. "
)

// evictionGracePeriod is Kubernetes' immediateEvictionGracePeriodSeconds:
// a pod over a local storage limit is not given its own grace period.
const evictionGracePeriod = 1

// runEvictionManager checks every EvictionMonitoringPeriod the local
// storage of the fleet's pods, until ctx ends. One loop for the fleet, as
// its nodes' pods are in one informer: 5,000 nodes do not each walk it.
func (f *Fleet) runEvictionManager(ctx context.Context) {
	t := f.clock.NewTicker(f.cfg.EvictionMonitoringPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		for _, obj := range f.informer.Cache().List() {
			pod := obj.(*corev1.Pod)
			if k := f.byName[pod.Spec.NodeName]; k != nil && evictable(pod) {
				k.checkLocalStorage(ctx, pod)
			}
		}
	}
}

// evictable: the pod runs here (it is not done nor being deleted), is no
// static pod's mirror, and limits its local storage.
func evictable(pod *corev1.Pod) bool {
	if podFinished(pod) || pod.DeletionTimestamp != nil || kubetypes.IsMirrorPod(pod) {
		return false
	}
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && !volumemanager.IsMemory(v) && v.EmptyDir.SizeLimit != nil && v.EmptyDir.SizeLimit.Sign() > 0 {
			return true
		}
	}
	return hasEphemeralStorageLimit(pod)
}

// hasEphemeralStorageLimit: one of the pod's containers limits its
// ephemeral-storage.
func hasEphemeralStorageLimit(pod *corev1.Pod) bool {
	for _, c := range kubetypes.AllContainers(pod) {
		if !c.Resources.Limits.StorageEphemeral().IsZero() {
			return true
		}
	}
	return false
}

// checkLocalStorage evicts pod (the informer's: read, never changed) if
// it is over a local storage limit. A pod that cannot be measured now is
// measured again next period.
func (k *Kubelet) checkLocalStorage(ctx context.Context, pod *corev1.Pod) {
	if _, failed := k.status.Failure(pod.UID); failed {
		return // evicted already, or failed for another reason
	}
	usage, err := k.localStorageUsage(ctx, pod)
	if err != nil {
		if ctx.Err() == nil {
			k.log.Warn("eviction manager: cannot measure the pod's local storage", "pod", client.KeyOf(pod), "err", err)
		}
		return
	}
	if message, over := localStorageEviction(pod, usage); over {
		k.evict(pod, message)
	}
}

// localStorageEviction is the message of the first limit pod's usage
// breaks, if one.
//
//	emptyDir "cache" sizeLimit 1Ki holding 1500 bytes:
//	  `Usage of EmptyDir volume "cache" exceeds the limit "1Ki". `
func localStorageEviction(pod *corev1.Pod, u storageUsage) (string, bool) {
	for _, v := range pod.Spec.Volumes {
		used, measured := u.volumes[v.Name]
		if v.EmptyDir == nil || !measured {
			continue
		}
		if limit := v.EmptyDir.SizeLimit; limit != nil && limit.Sign() > 0 && used > limit.Value() {
			return fmt.Sprintf(emptyDirMessageFmt, v.Name, limit.String()), true
		}
	}
	if limit, ok := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})[corev1.ResourceEphemeralStorage]; ok {
		if u.total() > limit.Value() {
			return fmt.Sprintf(podEphemeralStorageMessageFmt, limit.String()), true
		}
	}
	for _, c := range pod.Spec.Containers {
		limit := c.Resources.Limits.StorageEphemeral()
		if used, measured := u.containers[c.Name]; measured && limit.Value() != 0 && used > limit.Value() {
			return fmt.Sprintf(containerEphemeralStorageMessageFmt, c.Name, limit.String()), true
		}
	}
	return "", false
}

// evict fails pod for message: Kubernetes' evictPod, whose killPodFunc
// here is the pod's own worker. The event and the failure are recorded
// now; the worker, which the pod is queued for, stops its containers and
// reports it Failed (runPod → failPod).
func (k *Kubelet) evict(pod *corev1.Pod, message string) {
	if known := k.status.Fail(pod.UID, status.Failure{Reason: reasonEvicted, Message: message}); known {
		return
	}
	key := client.KeyOf(pod)
	evicted := pod.DeepCopy() // the informer's copy is never changed
	evicted.SetGroupVersionKind(kubetypes.PodGVK)
	k.recorder.Event(evicted, corev1.EventTypeWarning, reasonEvicted, "%s", message)
	k.log.Info("eviction manager: evicting pod: "+message, "pod", key, "reason", reasonEvicted)
	k.queue.Add(key)
}

// failureGracePeriod is the StopContainer timeout of the failed pod's
// containers: the pod's own, but evictionGracePeriod for an evicted pod
// (the kubelet's minimum still applies).
func failureGracePeriod(f status.Failure, pod *corev1.Pod) int64 {
	if f.Reason == reasonEvicted {
		return gracePeriod(ptr.To[int64](evictionGracePeriod))
	}
	return gracePeriod(pod.Spec.TerminationGracePeriodSeconds)
}
