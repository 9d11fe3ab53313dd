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
// here.
//
// ReadWriteOncePod (Kubernetes' second rule here, rwop.go): a claim whose
// access modes include ReadWriteOncePod may be used by one pod in the
// whole cluster. While a pod bound (or assumed) to any node uses it,
// every node rejects the next pod that asks for it, with "node has pod
// using PersistentVolumeClaim with the same name and ReadWriteOncePod
// access mode"; Unschedulable, so that a pod of higher priority may
// preempt the one holding it. A claim the pod names that does not exist
// rejects the pod in PreFilter: `persistentvolumeclaim "data" not found`.
//
// A pod with none of the four disk types and no ReadWriteOncePod claim in
// use skips this filter in PreFilter.
//
// Where things live:
//
//	file                    what it holds
//	volume_restrictions.go  the plugin: PreFilter, and Filter's disk conflicts (NoDiskConflict)
//	rwop.go                 ReadWriteOncePod: a claim in use by a pod elsewhere
package volumerestrictions

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "VolumeRestrictions"

// Kubernetes' reason strings.
const (
	ErrReasonDiskConflict             = "node(s) had no available disk"
	ErrReasonReadWriteOncePodConflict = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)

// VolumeRestrictions is the filter.
type VolumeRestrictions struct {
	storage framework.StorageLister
}

// errStatus is the one rejection, shared. Unschedulable: the disk frees up
// when the pod using it goes.
var errStatus = framework.NewStatus(framework.Unschedulable, ErrReasonDiskConflict).WithPlugin(Name)

var skip = framework.NewStatus(framework.Skip, "the pod has no GCE PD, AWS EBS, RBD or iSCSI volume, and no ReadWriteOncePod claim in use")

// New returns the plugin, which reads claims through h.
func New(h framework.Handle) *VolumeRestrictions {
	return &VolumeRestrictions{storage: h.StorageOrNone()}
}

func (*VolumeRestrictions) Name() string { return Name }

// PreFilter counts the pods using the pod's ReadWriteOncePod claims, and
// skips the filter for a pod without any disk it checks and no such
// claim in use.
func (pl *VolumeRestrictions) PreFilter(state *framework.CycleState, pod *framework.PodInfo, nodes framework.NodeInfoLister) *framework.Status {
	s, st := pl.readWriteOncePod(pod, nodes)
	if st != nil {
		return st
	}
	if !slices.ContainsFunc(pod.Pod.Spec.Volumes, needsRestrictionsCheck) && s.conflicts == 0 {
		return skip
	}
	state.Write(preFilterStateKey, s)
	return nil
}

func needsRestrictionsCheck(v corev1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// Filter rejects the node if a pod there uses one of the pod's disks in a
// conflicting way, or any pod uses one of its ReadWriteOncePod claims.
func (*VolumeRestrictions) Filter(state *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
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
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.conflicts > 0 {
		return errReadWriteOncePod
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

// EventsToRegister: a new node, a bound pod going away (releasing its
// disks, its ReadWriteOncePod claim), a claim created or changed.
func (*VolumeRestrictions) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.Add},
		{Resource: framework.AssignedPod, ActionType: framework.Delete},
		{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update},
	}
}
