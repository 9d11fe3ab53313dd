// Package volumerestrictions is the filter that keeps two pods from
// attaching the same disk on one node when the disk does not allow it.
//
// Seed predicate: NoDiskConflict ("已经 mount 的 volume 和 pod 指定的 volume
// 不冲突，除非它们都是只读"). Kubernetes plugin: VolumeRestrictions.
//
// Rule: for every volume of the pod of one of the in-tree disk types below,
// no pod already on the node may use the same disk, unless the type allows
// read-only sharing and both mount it read-only:
//
//	type                  same disk when                              shared read-only?
//	gcePersistentDisk     pdName is equal                             yes
//	awsElasticBlockStore  volumeID is equal                           no: EBS attaches to one node's one mount
//	rbd                   a monitor in common, same pool and image    yes
//	iscsi                 iqn is equal                                yes
//
// Worked example: node01 runs a pod mounting gcePersistentDisk
// {pdName: data, readOnly: true}.
//
//	pod mounting pdName data, readOnly: true   → fits (both read-only)
//	pod mounting pdName data, readOnly: false  → rejected: "node(s) had no available disk"
//	pod mounting pdName logs                   → fits
//
// Other volume types (emptyDir, hostPath, configMap...) never conflict
// here; a pod with none of the four types skips this filter in PreFilter.
// Kubernetes also checks ReadWriteOncePod PersistentVolumeClaims in this
// plugin; mkube's API has no PersistentVolumeClaims yet, so neither does
// this filter.
package volumerestrictions

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "VolumeRestrictions"

// ErrReasonDiskConflict is Kubernetes' reason string.
const ErrReasonDiskConflict = "node(s) had no available disk"

// VolumeRestrictions is the filter.
type VolumeRestrictions struct{}

// errStatus is the one rejection, shared. Unschedulable: the disk frees up
// when the pod using it goes.
var errStatus = framework.NewStatus(framework.Unschedulable, ErrReasonDiskConflict).WithPlugin(Name)

var skip = framework.NewStatus(framework.Skip, "the pod has no GCE PD, AWS EBS, RBD or iSCSI volume")

// New returns the plugin.
func New() *VolumeRestrictions { return &VolumeRestrictions{} }

func (*VolumeRestrictions) Name() string { return Name }

// PreFilter skips the filter for a pod without any disk it checks.
func (*VolumeRestrictions) PreFilter(_ *framework.CycleState, pod *framework.PodInfo, _ framework.NodeInfoLister) *framework.Status {
	if !slices.ContainsFunc(pod.Pod.Spec.Volumes, needsRestrictionsCheck) {
		return skip
	}
	return nil
}

func needsRestrictionsCheck(v corev1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// Filter rejects the node if a pod there uses one of the pod's disks in a
// conflicting way.
func (*VolumeRestrictions) Filter(_ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	for i := range pod.Pod.Spec.Volumes {
		v := &pod.Pod.Spec.Volumes[i]
		if !needsRestrictionsCheck(*v) {
			continue
		}
		for _, existing := range node.Pods {
			if isVolumeConflict(v, existing.Pod) {
				return errStatus
			}
		}
	}
	return nil
}

// isVolumeConflict reports whether volume clashes with a volume of pod.
func isVolumeConflict(volume *corev1.Volume, pod *corev1.Pod) bool {
	for i := range pod.Spec.Volumes {
		ev := &pod.Spec.Volumes[i]
		if d, e := volume.GCEPersistentDisk, ev.GCEPersistentDisk; d != nil && e != nil {
			if d.PDName == e.PDName && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
		if d, e := volume.AWSElasticBlockStore, ev.AWSElasticBlockStore; d != nil && e != nil {
			if d.VolumeID == e.VolumeID {
				return true
			}
		}
		if d, e := volume.ISCSI, ev.ISCSI; d != nil && e != nil {
			if d.IQN == e.IQN && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
		if d, e := volume.RBD, ev.RBD; d != nil && e != nil {
			if haveOverlap(d.CephMonitors, e.CephMonitors) && d.RBDPool == e.RBDPool && d.RBDImage == e.RBDImage && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
	}
	return false
}

// haveOverlap reports whether two lists of Ceph monitors share one.
func haveOverlap(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// EventsToRegister: a new node, or a bound pod going away (releasing its
// disks).
func (*VolumeRestrictions) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.Add},
		{Resource: framework.AssignedPod, ActionType: framework.Delete},
	}
}
