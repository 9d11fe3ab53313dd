// Package nodeports is the filter that keeps two pods from binding the
// same host port on one node.
//
// Seed predicate: PodFitsHostPorts ("节点上已经使用的 port 是否和 pod 申请的
// port 冲突"). Kubernetes plugin: NodePorts.
//
// A container port with hostPort set is reachable on the node's own
// address: the node can give it to one pod only. The rule, for every
// hostPort the pod asks for (containers and sidecars):
//
//	the same protocol and port must not be taken on the same host IP, where
//	0.0.0.0 (the default when hostIP is empty) means every IP of the node:
//	  wanted 0.0.0.0:80/TCP   conflicts with 80/TCP taken on any IP
//	  wanted 10.0.0.1:80/TCP  conflicts with 80/TCP taken on 10.0.0.1 or 0.0.0.0
//	  80/TCP and 80/UDP never conflict (protocol defaults to TCP)
//
// Worked example: node01 runs a pod with hostPort 80 (hostIP empty, TCP).
//
//	pod asking hostPort 80                  → rejected: "node(s) didn't have free ports for the requested pod ports"
//	pod asking hostPort 80, protocol UDP    → fits
//	pod asking hostPort 80, hostIP 10.0.0.1 → rejected (0.0.0.0 holds it on every IP)
//	pod asking hostPort 8080                → fits
//
// The ports taken on each node are kept in framework.NodeInfo.UsedPorts as
// pods come and go, so the check does not walk the node's pods. A pod that
// asks for no host port (most pods) skips this filter in PreFilter.
//
// It all lives in node_ports.go.
package nodeports

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "NodePorts"

// ErrReason is Kubernetes' reason string.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// NodePorts is the filter.
type NodePorts struct{}

// errStatus is the one rejection, shared. Unschedulable, not Unresolvable:
// the port frees up when the pod holding it goes.
var errStatus = framework.NewStatus(framework.Unschedulable, ErrReason).WithPlugin(Name)

var skip = framework.NewStatus(framework.Skip, "the pod asks for no host port")

// New returns the plugin.
func New() *NodePorts { return &NodePorts{} }

func (*NodePorts) Name() string { return Name }

// PreFilter collects the pod's host ports; a pod with none skips Filter.
func (*NodePorts) PreFilter(state *framework.CycleState, pod *framework.PodInfo, _ framework.NodeInfoLister) *framework.Status {
	ports := framework.HostPorts(pod.Pod)
	if len(ports) == 0 {
		return skip
	}
	state.Write(preFilterStateKey, ports)
	return nil
}

// Filter rejects the node if one of the pod's host ports is taken there.
func (*NodePorts) Filter(state *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	ports, err := framework.ReadAs[[]corev1.ContainerPort](state, preFilterStateKey)
	if err != nil {
		ports = framework.HostPorts(pod.Pod) // PreFilter did not run
	}
	for _, p := range ports {
		if node.UsedPorts.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return errStatus
		}
	}
	return nil
}

// EventsToRegister: a new node, or a bound pod going away (freeing its
// ports).
func (*NodePorts) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.Add},
		{Resource: framework.AssignedPod, ActionType: framework.Delete},
	}
}
