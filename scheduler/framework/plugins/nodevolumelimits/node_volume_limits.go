// Package nodevolumelimits is the filter that keeps a node from having
// more volumes of a CSI driver attached than the driver can attach there:
// a cloud VM takes a few dozen disks at most, and a pod whose volume
// cannot be attached would hang in ContainerCreating.
//
// Seed predicate: MaxCSIVolumeCountPred (it came after the seed's
// predicates, with CSI drivers; the older MaxEBSVolumeCount,
// MaxGCEPDVolumeCount and MaxAzureDiskVolumeCount are gone: since CSI
// migration those disks count here, as their CSI drivers' volumes).
// Kubernetes plugin: NodeVolumeLimits.
//
// Rule: each node's kubelet writes a CSINode named after the node, which
// says for each CSI driver on it how many of its volumes the node can
// have (spec.drivers[].allocatable.count; none, or no CSINode at all, is
// no limit). For each driver with a limit, count the unique volumes of
// that driver used by the pods already on the node, add the pod's volumes
// of that driver not among them, and reject the node if the sum exceeds
// the limit: "node(s) exceed max volume count". A volume two pods share
// counts once; so does a volume the pod shares with a pod already there.
//
// Which driver a claim's volume belongs to (volumes.go): a PersistentVolume
// with spec.csi is spec.csi.driver's, identified by its volumeHandle; one
// that mkube's provisioner mkube.io/hostpath made (its annotation
// pv.kubernetes.io/provisioned-by) is hostpath.csi.mkube.io's, the driver
// that provisioner stands in for (package internal/csitranslation, as
// Kubernetes translates an in-tree plugin to the CSI driver that replaced
// it), identified by its name; a claim not bound yet counts under its
// StorageClass's provisioner, identified by namespace/name. Any other
// volume (a static hostPath or nfs one, an emptyDir) counts for no driver.
//
// Worked example: node01's CSINode gives hostpath.csi.mkube.io
// allocatable.count 2; node01 runs pod a with claim data-a (volume
// pvc-a) and pod b with data-b (pvc-b); node02 has no CSINode.
//
//	pod c, claim data-c (class standard, not bound yet)   node01: 2 + 1 > 2, rejected "node(s) exceed max volume count"
//	                                                      node02: fits (no limit)
//	pod d, claim data-a                                   node01: 2 + 0 ≤ 2, fits (pvc-a is attached already)
//
// The rejection is Unschedulable: deleting a pod on the node detaches its
// volumes, so preemption may help, and so may the deletion of pod a
// itself (the plugin retries on it, and on a CSINode written or changed).
//
// A pod with no claim and no ephemeral volume skips the filter in
// PreFilter, as does one none of whose volumes belong to a driver. A claim
// the pod names that does not exist rejects it there with the lister's
// NotFound, as Kubernetes' Filter does.
//
// Not in mkube: Kubernetes also counts the VolumeAttachments of the node
// (volumes still attached after their pod went) and in-tree volumes
// migrated to CSI (awsElasticBlockStore → ebs.csi.aws.com); mkube has no
// attach/detach controller and no such volumes.
//
// Where things live:
//
//	file                   what it holds
//	node_volume_limits.go  the plugin: PreFilter collects the pod's volumes, Filter counts them against the CSINode's limits
//	volumes.go             which driver each of a pod's volumes belongs to: a bound volume's, or its class's provisioner
package nodevolumelimits

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "NodeVolumeLimits"

// ErrReasonMaxVolumeCountExceeded is Kubernetes' reason string.
const ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// NodeVolumeLimits is the filter.
type NodeVolumeLimits struct {
	storage  framework.StorageLister
	csiNodes framework.CSINodeLister
}

// New returns the plugin over h's storage and CSINode listers.
func New(h framework.Handle) *NodeVolumeLimits {
	return &NodeVolumeLimits{storage: h.StorageOrNone(), csiNodes: h.CSINodesOrNone()}
}

func (*NodeVolumeLimits) Name() string { return Name }

// errStatus is the one rejection, shared. Unschedulable: a pod leaving
// the node frees its volumes' attachments.
var errStatus = framework.NewStatus(framework.Unschedulable, ErrReasonMaxVolumeCountExceeded).WithPlugin(Name)

var (
	skipNoClaims  = framework.NewStatus(framework.Skip, "the pod has no PersistentVolumeClaim and no ephemeral volume")
	skipNoDrivers = framework.NewStatus(framework.Skip, "the pod's volumes belong to no CSI driver")
)

// preFilterState is the pod's volumes that belong to a driver. Never
// written after PreFilter.
type preFilterState struct{ volumes sets.Set[volumeID] }

// PreFilter finds the drivers of the pod's volumes. Kubernetes does this
// in Filter, node by node, because an in-tree volume counts as a CSI
// driver's only on nodes that migrated it; mkube's answer is the same on
// every node, so it is found once.
func (pl *NodeVolumeLimits) PreFilter(state *framework.CycleState, pod *framework.PodInfo, _ framework.NodeInfoLister) *framework.Status {
	if !hasClaims(pod.Pod) {
		return skipNoClaims
	}
	s := &preFilterState{volumes: sets.New[volumeID]()}
	if err := pl.addVolumes(pod.Pod, true, s.volumes); err != nil {
		return err
	}
	if len(s.volumes) == 0 {
		return skipNoDrivers
	}
	state.Write(preFilterStateKey, s)
	return nil
}

// Filter counts, for each driver of the pod's volumes that the node's
// CSINode limits, the volumes attached there and the pod's new ones.
func (pl *NodeVolumeLimits) Filter(state *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	csiNode, _ := pl.csiNodes.CSINode(node.Node().Name)
	limits := volumeLimits(csiNode)
	if !limitsAny(limits, s.volumes) {
		return nil // no CSINode, or none of its limits is for the pod's drivers
	}
	attached := sets.New[volumeID]()
	for _, p := range node.Pods {
		if st := pl.addVolumes(p.Pod, false, attached); st != nil {
			return st
		}
	}
	used := map[string]int{} // by driver
	for id := range attached {
		used[id.driver]++
	}
	for id := range s.volumes {
		if !attached.Has(id) {
			used[id.driver]++ // a new attachment
		}
	}
	for driver, limit := range limits {
		if int64(used[driver]) > limit {
			return errStatus
		}
	}
	return nil
}

// volumeLimits are the drivers the CSINode limits, with their counts
// (Kubernetes' getVolumeLimits); a driver without a count, like a node
// without a CSINode, has no limit.
func volumeLimits(n *storagev1.CSINode) map[string]int64 {
	if n == nil {
		return nil
	}
	out := map[string]int64{}
	for _, d := range n.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			out[d.Name] = int64(*d.Allocatable.Count)
		}
	}
	return out
}

// limitsAny reports whether a limit applies to a driver of volumes: only
// then are the node's pods worth counting.
func limitsAny(limits map[string]int64, volumes sets.Set[volumeID]) bool {
	for id := range volumes {
		if _, ok := limits[id.driver]; ok {
			return true
		}
	}
	return false
}

// EventsToRegister: a CSINode written or changed (a node now says its
// limit, or a larger one), a bound pod deleted (its volumes detach), a
// claim created (a missing one the pod waited for). Kubernetes registers
// the same, and VolumeAttachment deletions, which mkube does not have.
func (*NodeVolumeLimits) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.CSINode, ActionType: framework.Add | framework.Update},
		{Resource: framework.AssignedPod, ActionType: framework.Delete},
		{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add},
	}
}
