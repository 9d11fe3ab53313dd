package framework

import (
	corev1 "k8s.io/api/core/v1"
)

// What the framework lends preemption (package framework/preemption) and
// the nominated pods. Seed 003: "一个 Pod 对象无法被调度时，调度器会尝试抢占
// （驱逐）较低优先级的 Pod 对象，以便可以调度当前 Pod".
//
// Preemption asks "would the pod fit on this node without these pods?". It
// answers on a clone of the node (NodeInfo.Clone) and of the cycle state
// (CycleState.Clone): it takes pods off the clone, tells the plugins whose
// PreFilter counted pods (PreFilterExtensions), and runs the filters again.
//
// A pod that preempted is nominated to the node (status.nominatedNodeName)
// while its victims terminate. Until it is bound, the room it is waiting
// for is its own: RunFilterPluginsWithNominatedPods counts it on that node
// for every pod of lower or equal priority, so they do not take the room.

// PreFilterExtensions is implemented by a PreFilter plugin whose state
// counts pods on nodes (InterPodAffinity counts, per topology domain, the
// pods its terms select). When preemption takes a pod off a node, or puts
// one back, or a nominated pod is counted on a node, the framework calls
// RemovePod or AddPod so the plugin updates its counts rather than
// recounting the whole cluster. node already has (or no longer has) the
// pod when they are called. Plugins whose PreFilter state does not depend
// on other pods (NodePorts keeps only the pod's own ports) need not
// implement it: their Filter reads the node, which is up to date.
type PreFilterExtensions interface {
	AddPod(state *CycleState, podToSchedule, podToAdd *PodInfo, node *NodeInfo) *Status
	RemovePod(state *CycleState, podToSchedule, podToRemove *PodInfo, node *NodeInfo) *Status
}

// RunPreFilterExtensionAddPod tells every PreFilterExtensions plugin that
// ran its PreFilter this cycle (did not Skip) that podToAdd is now on node.
func (f *Framework) RunPreFilterExtensionAddPod(state *CycleState, podToSchedule, podToAdd *PodInfo, node *NodeInfo) *Status {
	for i, p := range f.filters {
		if p.ext == nil || state.skipFilter&(1<<i) != 0 {
			continue
		}
		if st := p.ext.AddPod(state, podToSchedule, podToAdd, node); !st.IsSuccess() {
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod is RunPreFilterExtensionAddPod for a pod
// taken off node.
func (f *Framework) RunPreFilterExtensionRemovePod(state *CycleState, podToSchedule, podToRemove *PodInfo, node *NodeInfo) *Status {
	for i, p := range f.filters {
		if p.ext == nil || state.skipFilter&(1<<i) != 0 {
			continue
		}
		if st := p.ext.RemovePod(state, podToSchedule, podToRemove, node); !st.IsSuccess() {
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// NominatedPods are, for one pod being scheduled, the pods nominated to
// each node (by node name) that count against it: those of higher or equal
// priority, other than itself. nil when there are none, the usual case.
type NominatedPods map[string][]*PodInfo

// RunFilterPluginsWithNominatedPods runs the filters on node as if the
// nominated pods were already there (Kubernetes' rule of the same name):
//
//  1. with nominated, on clones of node and state: the pods nominated here
//     take their room, their ports, and count for inter-pod affinity;
//  2. if that passes and pods were added, once more without them: a pod
//     whose required affinity only a nominated pod satisfies must not be
//     placed on the strength of a pod that is not there yet.
//
// Example: node01 (2 cpu) runs low (priority 0, 1 cpu) and batch (500m);
// web (priority 1000, 1 cpu) preempted low and waits for it to go. Once low
// is gone, node01 has 1.5 cpu free, but for a pod of priority 1000 or
// less web is there already: 500m is left. A pod of priority 2000 does
// not see web at all, and may take the room (web will preempt again).
//
// With no nominated pods it is RunFilterPlugins, at no extra cost.
func (f *Framework) RunFilterPluginsWithNominatedPods(state *CycleState, pod *PodInfo, node *NodeInfo, nominated []*PodInfo) *Status {
	if len(nominated) == 0 {
		return f.RunFilterPlugins(state, pod, node)
	}
	withNominated, stateWithNominated := node.Clone(), state.Clone()
	for _, p := range nominated {
		withNominated.AddPodInfo(p)
		if st := f.RunPreFilterExtensionAddPod(stateWithNominated, pod, p, withNominated); !st.IsSuccess() {
			return st
		}
	}
	if st := f.RunFilterPlugins(stateWithNominated, pod, withNominated); !st.IsSuccess() {
		return st
	}
	return f.RunFilterPlugins(state, pod, node)
}

// Candidate is a node where preemption makes room for a pod, and the pods
// that must go for it (Kubernetes' preemption.Candidate with its
// extender/v1.Victims).
type Candidate struct {
	Node string
	// Victims, most important first (higher priority, then started earlier).
	Victims []*corev1.Pod
	// NumPDBViolations is how many victims a PodDisruptionBudget protects:
	// deleting them takes the budget below its minimum.
	NumPDBViolations int
}

// NominatingMode says what a failed attempt does to the pod's
// status.nominatedNodeName.
type NominatingMode int

const (
	// ModeNoop leaves it as it is (the pod waits for its victims, or
	// preemption did not run).
	ModeNoop NominatingMode = iota
	// ModeOverride sets it to NominatingInfo.NominatedNodeName; "" clears
	// it (preemption found no node, or the attempt ended in an error).
	ModeOverride
)

// NominatingInfo is what a failed attempt does to the pod's nomination
// (Kubernetes' framework.NominatingInfo).
type NominatingInfo struct {
	NominatedNodeName string
	Mode              NominatingMode
}

// Nominate sets the nomination to node; ClearNomination clears it.
func Nominate(node string) NominatingInfo {
	return NominatingInfo{NominatedNodeName: node, Mode: ModeOverride}
}

// ClearNomination is the NominatingInfo that clears status.nominatedNodeName.
var ClearNomination = NominatingInfo{Mode: ModeOverride}
