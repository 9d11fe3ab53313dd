package framework

// EventResource is what changed in a ClusterEvent.
type EventResource string

const (
	// Node: a Node object.
	Node EventResource = "Node"
	// AssignedPod: a pod bound to a node (spec.nodeName set), whose
	// requests count on that node.
	AssignedPod EventResource = "AssignedPod"
	// PersistentVolumeClaim, PersistentVolume and StorageClass: the storage
	// objects the volume plugins read (a claim bound, a volume created, a
	// class that can now provision).
	PersistentVolumeClaim EventResource = "PersistentVolumeClaim"
	PersistentVolume      EventResource = "PersistentVolume"
	StorageClass          EventResource = "StorageClass"
	// CSINode: what a node's kubelet says of its CSI drivers, whose
	// allocatable counts NodeVolumeLimits checks.
	CSINode EventResource = "CSINode"
	// WildCard matches every resource: events that must move every pod.
	WildCard EventResource = "*"
)

// ActionType is what happened to it, as a bit set so that one node update
// can be several things at once.
type ActionType uint

const (
	Add ActionType = 1 << iota
	Delete
	// UpdateNodeAllocatable: status.allocatable changed.
	UpdateNodeAllocatable
	// UpdateNodeLabel: metadata.labels changed.
	UpdateNodeLabel
	// UpdateNodeTaint: spec.taints or spec.unschedulable changed (Kubernetes
	// treats cordoning as a taint change).
	UpdateNodeTaint
	// UpdateNodeCondition: a condition's status changed.
	UpdateNodeCondition
	// UpdatePodLabel: a bound pod's labels changed, which may satisfy or
	// break another pod's inter-pod affinity.
	UpdatePodLabel

	// All is every action.
	All ActionType = 1<<iota - 1
	// Update is every kind of update.
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition | UpdatePodLabel
)

// ClusterEvent is a change in the cluster that may make a waiting pod
// schedulable. Plugins register the events that could undo their
// rejections; the queue matches incoming events against them.
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
	Label      string // a name for logs, e.g. "NodeAdd"
}

// Match reports whether the incoming event is one e registered for.
func (e ClusterEvent) Match(incoming ClusterEvent) bool {
	if e.Resource == WildCard || incoming.Resource == WildCard {
		return true
	}
	return e.Resource == incoming.Resource && e.ActionType&incoming.ActionType != 0
}

// Events the scheduler raises.
var (
	NodeAdd                = ClusterEvent{Resource: Node, ActionType: Add, Label: "NodeAdd"}
	AssignedPodAdd         = ClusterEvent{Resource: AssignedPod, ActionType: Add, Label: "AssignedPodAdd"}
	AssignedPodDelete      = ClusterEvent{Resource: AssignedPod, ActionType: Delete, Label: "AssignedPodDelete"}
	AssignedPodUpdateLabel = ClusterEvent{Resource: AssignedPod, ActionType: UpdatePodLabel, Label: "AssignedPodUpdateLabel"}
	// Storage objects change as a whole: any update is Update.
	PersistentVolumeClaimAdd    = ClusterEvent{Resource: PersistentVolumeClaim, ActionType: Add, Label: "PersistentVolumeClaimAdd"}
	PersistentVolumeClaimUpdate = ClusterEvent{Resource: PersistentVolumeClaim, ActionType: Update, Label: "PersistentVolumeClaimUpdate"}
	PersistentVolumeAdd         = ClusterEvent{Resource: PersistentVolume, ActionType: Add, Label: "PersistentVolumeAdd"}
	PersistentVolumeUpdate      = ClusterEvent{Resource: PersistentVolume, ActionType: Update, Label: "PersistentVolumeUpdate"}
	StorageClassAdd             = ClusterEvent{Resource: StorageClass, ActionType: Add, Label: "StorageClassAdd"}
	StorageClassUpdate          = ClusterEvent{Resource: StorageClass, ActionType: Update, Label: "StorageClassUpdate"}
	CSINodeAdd                  = ClusterEvent{Resource: CSINode, ActionType: Add, Label: "CSINodeAdd"}
	CSINodeUpdate               = ClusterEvent{Resource: CSINode, ActionType: Update, Label: "CSINodeUpdate"}
	// UnschedulableTimeout moves a pod that has waited too long for an
	// event: the backstop for changes no plugin watches.
	UnschedulableTimeout = ClusterEvent{Resource: WildCard, ActionType: All, Label: "UnschedulableTimeout"}
)
