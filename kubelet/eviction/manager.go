package eviction

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/kubelet/status"
	kubetypes "github.com/mkube/mkube/kubelet/types"
	"github.com/mkube/mkube/kubelet/volumemanager"
)

// The kubelet's eviction manager, its local-storage part (Kubernetes'
// LocalStorageCapacityIsolation, localStorageEviction): every
// EvictionMonitoringPeriod it measures the local storage of each running
// pod that limits it (usage.go), and evicts a pod that uses more
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

// DefaultMonitoringPeriod is Kubernetes' evictionMonitoringPeriod,
// how often its eviction manager runs: a pod may run over a limit for
// that long before it is evicted.
const DefaultMonitoringPeriod = 10 * time.Second

// The eviction manager's reason and messages (pkg/kubelet/eviction).
const (
	Reason                              = "Evicted"
	emptyDirMessageFmt                  = "Usage of EmptyDir volume %q exceeds the limit %q. "
	podEphemeralStorageMessageFmt       = "Pod ephemeral local storage usage exceeds the total limit of containers %s. "
	containerEphemeralStorageMessageFmt = "Container %s exceeded its local ephemeral storage limit %q. "
)

// GracePeriodSeconds is Kubernetes' immediateEvictionGracePeriodSeconds:
// a pod over a local storage limit is not given its own grace period.
const GracePeriodSeconds = 1

// StatsLister is the runtime's side the manager needs: the containers'
// writable layers (CRI ListContainerStats).
type StatsLister interface {
	ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error)
}

// Failures are the failures the kubelet decided (package status): an
// evicted pod is one.
type Failures interface {
	Failure(uid types.UID) (status.Failure, bool)
	Fail(uid types.UID, f status.Failure) (known bool)
}

// Options are what a node's Manager is given by its kubelet.
type Options struct {
	// OnDisk is where a node path is on the real machine; nil when the
	// node has no disk (no NodeRoot): its volumes are then not measured.
	OnDisk func(nodePath string) string
	// LogDir is the pod's log directory.
	LogDir func(pod *corev1.Pod) string
	// Runtime lists the containers' stats; Selector is the label
	// selector of the pod's containers on this node, ContainerLabel the
	// label naming a container.
	Runtime        StatsLister
	Selector       func(pod *corev1.Pod) map[string]string
	ContainerLabel string
	Failures       Failures
	Recorder       *record.Recorder
	// Enqueue queues the sync of the pod named key, which stops an
	// evicted pod's containers.
	Enqueue func(key string)
	Log     *slog.Logger
}

// Manager is one node's eviction manager.
type Manager struct{ o Options }

// NewManager returns the eviction manager of a node.
func NewManager(o Options) *Manager { return &Manager{o: o} }

// Run checks every period the local storage of the pods, until ctx
// ends, each by the Manager of its node (managerOf: nil for a node that
// is none of the caller's). One loop for a fleet, as its nodes' pods are
// in one informer: 5,000 nodes do not each walk it.
func Run(ctx context.Context, clk clock.WithTicker, period time.Duration, pods func() []*corev1.Pod, managerOf func(node string) *Manager) {
	t := clk.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		for _, pod := range pods() {
			if m := managerOf(pod.Spec.NodeName); m != nil && evictable(pod) {
				m.CheckLocalStorage(ctx, pod)
			}
		}
	}
}

// evictable: the pod runs here (it is not done nor being deleted), is no
// static pod's mirror, and limits its local storage.
func evictable(pod *corev1.Pod) bool {
	if kubetypes.PodFinished(pod) || pod.DeletionTimestamp != nil || kubetypes.IsMirrorPod(pod) {
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

// CheckLocalStorage evicts pod (the informer's: read, never changed) if
// it is over a local storage limit. A pod that cannot be measured now is
// measured again next period.
func (m *Manager) CheckLocalStorage(ctx context.Context, pod *corev1.Pod) {
	if _, failed := m.o.Failures.Failure(pod.UID); failed {
		return // evicted already, or failed for another reason
	}
	usage, err := m.LocalStorageUsage(ctx, pod)
	if err != nil {
		if ctx.Err() == nil {
			m.o.Log.Warn("eviction manager: cannot measure the pod's local storage", "pod", client.KeyOf(pod), "err", err)
		}
		return
	}
	if message, over := localStorageEviction(pod, usage); over {
		m.evict(pod, message)
	}
}

// localStorageEviction is the message of the first limit pod's usage
// breaks, if one.
//
//	emptyDir "cache" sizeLimit 1Ki holding 1500 bytes:
//	  `Usage of EmptyDir volume "cache" exceeds the limit "1Ki". `
func localStorageEviction(pod *corev1.Pod, u Usage) (string, bool) {
	for _, v := range pod.Spec.Volumes {
		used, measured := u.Volumes[v.Name]
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
		if used, measured := u.Containers[c.Name]; measured && limit.Value() != 0 && used > limit.Value() {
			return fmt.Sprintf(containerEphemeralStorageMessageFmt, c.Name, limit.String()), true
		}
	}
	return "", false
}

// evict fails pod for message: Kubernetes' evictPod, whose killPodFunc
// here is the pod's own worker. The event and the failure are recorded
// now; the worker, which the pod is queued for, stops its containers and
// reports it Failed (package kubelet's runPod → failPod).
func (m *Manager) evict(pod *corev1.Pod, message string) {
	if known := m.o.Failures.Fail(pod.UID, status.Failure{Reason: Reason, Message: message}); known {
		return
	}
	key := client.KeyOf(pod)
	evicted := pod.DeepCopy() // the informer's copy is never changed
	evicted.SetGroupVersionKind(kubetypes.PodGVK)
	m.o.Recorder.Event(evicted, corev1.EventTypeWarning, Reason, "%s", message)
	m.o.Log.Info("eviction manager: evicting pod: "+message, "pod", key, "reason", Reason)
	m.o.Enqueue(key)
}
