// Package nodename is the filter that honours a pod's spec.nodeName.
//
// Seed predicate: PodFitsHost ("如果 pod 指定了 NodeName，检查节点名称是否和
// NodeName 匹配"). Kubernetes plugin: NodeName.
//
// A pod created with spec.nodeName set never reaches the scheduler at all:
// it is already bound, and that node's kubelet runs it (seed section 三.1:
// "会跳过 Scheduler 的调度策略"). The filter matters for the pods that do
// go through a scheduling cycle with a name set, and keeps the rule in one
// place for callers that check a pod against a node, as the kubelet's
// admission does in Kubernetes.
//
// Rule: if pod.spec.nodeName != "" the node's name must equal it.
// Example: a pod with nodeName node02 is rejected by node01 and node03
// ("node(s) didn't match the requested node name") and accepted by node02.
//
// It all lives in node_name.go.
package nodename

import (
	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "NodeName"

// ErrReason is Kubernetes' reason string.
const ErrReason = "node(s) didn't match the requested node name"

// NodeName is the filter.
type NodeName struct{}

// errStatus is the one rejection, shared (see framework.Status.WithPlugin).
// Nodes cannot be renamed, so removing pods cannot help.
var errStatus = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason).WithPlugin(Name)

// New returns the plugin.
func New() *NodeName { return &NodeName{} }

func (*NodeName) Name() string { return Name }

// Filter accepts the node the pod names, or every node if it names none.
func (*NodeName) Filter(_ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	want := pod.Pod.Spec.NodeName
	if want == "" || want == node.Node().Name {
		return nil
	}
	return errStatus
}

// EventsToRegister: only a new node can be the one named.
func (*NodeName) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add}}
}
