// Package nodeaffinity is the filter that sends pods only to nodes whose
// labels they select.
//
// Seed predicate: PodSelectorMatches ("过滤掉和 pod 指定的 label 不匹配的节点"),
// section 三.2 (nodeSelector). Kubernetes plugin: NodeAffinity, which
// checks spec.nodeSelector and spec.affinity.nodeAffinity together and
// gives both one reason.
//
// Rule: every key: value of spec.nodeSelector must be a label of the node
// with that value. An empty nodeSelector selects every node.
//
// Example: nodes node01 {myname: scj} and node02 {myname: tan}; a pod with
// nodeSelector {myname: scj} fits node01 only, node02 reporting
// "node(s) didn't match Pod's node affinity/selector". Relabelling node02
// (kubectl label nodes node02 myname=scj --overwrite) makes it fit there
// too, and the waiting pod is retried at once.
//
// Not yet here: requiredDuringSchedulingIgnoredDuringExecution node
// affinity terms (In, NotIn, Exists, DoesNotExist, Gt, Lt) and the
// preferred terms' score; they belong in this plugin.
package nodeaffinity

import (
	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "NodeAffinity"

// ErrReasonPod is Kubernetes' reason string.
const ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"

// NodeAffinity is the filter.
type NodeAffinity struct{}

// errStatus is the one rejection, shared (see framework.Status.WithPlugin).
// Labels change only by relabelling the node, so removing pods cannot help.
var errStatus = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod).WithPlugin(Name)

// New returns the plugin.
func New() *NodeAffinity { return &NodeAffinity{} }

func (*NodeAffinity) Name() string { return Name }

// Filter accepts nodes carrying every label of the pod's nodeSelector.
func (*NodeAffinity) Filter(pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	labels := node.Node().Labels
	for k, v := range pod.Pod.Spec.NodeSelector {
		if got, ok := labels[k]; !ok || got != v {
			return errStatus
		}
	}
	return nil
}

// EventsToRegister: a new node, or a node whose labels changed.
func (*NodeAffinity) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}}
}
