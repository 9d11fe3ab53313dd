// Package nodeunschedulable is the filter that keeps new pods off cordoned
// nodes.
//
// Seed: section 五 (kubectl cordon: "将 Node 标记为不可调度的状态，这样就不会让
// 新创建的 Pod 在此 Node 上运行"). Old predicate name CheckNodeUnschedulable;
// Kubernetes plugin: NodeUnschedulable.
//
// Rule: a node with spec.unschedulable = true (kubectl cordon, kubectl
// drain) is rejected, unless the pod tolerates the taint
// node.kubernetes.io/unschedulable:NoSchedule, which is how DaemonSet pods
// still land on cordoned nodes. Pods already running there stay.
//
// Example: node01 is cordoned. A plain pod is rejected with "node(s) were
// unschedulable"; a pod with the toleration
// {key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}
// fits.
//
// It all lives in node_unschedulable.go.
package nodeunschedulable

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins/tainttoleration"
)

// Name is the plugin's name in kube-scheduler.
const Name = "NodeUnschedulable"

// ErrReasonUnschedulable is Kubernetes' reason string.
const ErrReasonUnschedulable = "node(s) were unschedulable"

// unschedulableTaint is the taint a cordon amounts to.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// NodeUnschedulable is the filter.
type NodeUnschedulable struct{}

// errStatus is the one rejection, shared (see framework.Status.WithPlugin).
// Only an uncordon helps, not removing pods.
var errStatus = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable).WithPlugin(Name)

// New returns the plugin.
func New() *NodeUnschedulable { return &NodeUnschedulable{} }

func (*NodeUnschedulable) Name() string { return Name }

// Filter rejects a cordoned node unless the pod tolerates the cordon.
func (*NodeUnschedulable) Filter(_ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	if !node.Node().Spec.Unschedulable {
		return nil
	}
	if tainttoleration.TolerationsTolerateTaint(pod.Pod.Spec.Tolerations, &unschedulableTaint) {
		return nil
	}
	return errStatus
}

// EventsToRegister: a new node, or an uncordon (a taint-like change).
func (*NodeUnschedulable) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}}
}
