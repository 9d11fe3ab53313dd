package lifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodeaffinity"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodename"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodeports"
	"github.com/mkube/mkube/scheduler/framework/plugins/tainttoleration"
)

// Pod admission. Before a pod new to the node starts, the kubelet checks
// again what the scheduler checked, against the node as it is and the
// pods it already admitted: a pod may come with spec.nodeName set by its
// author (no scheduler looked), or the node may have filled up or
// changed since. First the pod's sysctls must be ones the node allows
// (sysctls.go); then Kubernetes' predicateAdmitHandler runs the
// scheduler's own general filters, in this order, and reports the first
// failure:
//
//	requests beyond what is free   reason OutOfcpu, OutOfmemory, OutOfpods, ...
//	                               "Node didn't have enough resource: cpu, requested: 500, used: 800, capacity: 1000"
//	nodeSelector, node affinity    reason NodeAffinity  "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
//	another node's name            reason NodeName
//	a hostPort another pod holds   reason NodePorts     "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
//	a NoExecute taint untolerated  reason TaintToleration
//
// Static pods, the node's own, are not admitted here (kubelet/config).
//
// A rejected pod never runs: it is Failed at once, with that reason and
// the message "Pod was rejected: ...", and its controller (a ReplicaSet,
// a StatefulSet) replaces it. Worked example, the StatefulSet
// conformance spec "should recreate evicted statefulset": a plain pod
// holds hostPort 21017 on node01; a StatefulSet's pod pinned to node01
// asks for it too, is rejected, deleted and recreated by its controller
// until the plain pod goes, then runs.

// Rejection is why a pod may not run on the node.
type Rejection struct{ Reason, Message string }

// Admit decides whether pod, new to the node, may run here. Admission
// is serial per node, as the kubelet's sync loop admits one pod after
// another: two pods asking for the last port cannot both be let in.
func (a *Admitter) Admit(ctx context.Context, pod *corev1.Pod) (*Rejection, error) {
	node, err := a.node.Node(ctx)
	if err != nil {
		return nil, err
	}
	a.admitMu.Lock()
	defer a.admitMu.Unlock()
	info := a.nodeWithOthers(node, pod.UID)
	if r := sysctlRejection(pod, a.allowedUnsafe); r != nil { // sysctls.go
		return r, nil
	}
	r, err := filterWithFreshNode(pod, info, func() (*corev1.Node, error) { return a.node.ReadNode(ctx) })
	if r != nil || err != nil {
		return r, err
	}
	a.NoteAdmitted(pod)
	return nil, nil
}

// nodeWithOthers is node with the pods admitted to it but uid: what a
// pod is judged against. Callers hold admitMu.
func (a *Admitter) nodeWithOthers(node *corev1.Node, uid types.UID) *framework.NodeInfo {
	info := framework.NewNodeInfo()
	info.SetNode(node)
	a.mu.Lock()
	defer a.mu.Unlock()
	for other, p := range a.admitted {
		if other != uid {
			info.AddPodInfo(framework.NewPodInfo(p))
		}
	}
	return info
}

// filterWithFreshNode runs generalFilter against info's node, which comes
// from the node informer and may lag the API server: `kubectl label node`
// and, a moment later, a pod the scheduler bound because of that label
// reach the kubelet by two watches, in either order. When the node's
// labels or taints are what refuse the pod, it asks the API server for
// the node as it is now (fresh) and decides by that.
func filterWithFreshNode(pod *corev1.Pod, info *framework.NodeInfo, fresh func() (*corev1.Node, error)) (*Rejection, error) {
	r := generalFilter(pod, info)
	if r == nil || (r.Reason != nodeaffinity.Name && r.Reason != tainttoleration.Name) {
		return r, nil
	}
	node, err := fresh()
	if err != nil {
		return nil, err
	}
	if node.ResourceVersion == info.Node().ResourceVersion {
		return r, nil
	}
	info.SetNode(node)
	return generalFilter(pod, info), nil
}

// NoteAdmitted counts pod among the node's pods for later admissions, as
// it is now (a resize changes its requests). A pod an earlier kubelet
// started is counted this way too, without a check: it runs already.
func (a *Admitter) NoteAdmitted(pod *corev1.Pod) {
	a.mu.Lock()
	a.admitted[pod.UID] = pod
	a.mu.Unlock()
}

// Forget stops counting the pods named key other than keep: they
// finished, or are gone from the API server.
func (a *Admitter) Forget(key string, keep types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for uid, p := range a.admitted {
		if uid != keep && client.KeyOf(p) == key {
			delete(a.admitted, uid)
			delete(a.pendingResizes, uid)
		}
	}
}

// generalFilter is Kubernetes' kubelet generalFilter: the scheduler's
// AdmissionCheck (resources, node affinity, node name, host ports), then
// the node's NoExecute taints; the first failure is the reason.
func generalFilter(pod *corev1.Pod, node *framework.NodeInfo) *Rejection {
	p := framework.NewPodInfo(pod)
	if r := insufficientResource(p, node); r != nil {
		return r
	}
	state := framework.NewCycleState()
	for _, filter := range []framework.FilterPlugin{nodeaffinity.New(), nodename.New(), nodeports.New()} {
		if st := filter.Filter(state, p, node); !st.IsSuccess() {
			return &Rejection{filter.Name(), fmt.Sprintf("Predicate %s failed: %s", filter.Name(), st.Message())}
		}
	}
	for i := range node.Node().Spec.Taints {
		t := &node.Node().Spec.Taints[i]
		if t.Effect == corev1.TaintEffectNoExecute && !tainttoleration.TolerationsTolerateTaint(pod.Spec.Tolerations, t) {
			return &Rejection{tainttoleration.Name, fmt.Sprintf("Predicate %s failed: %s", tainttoleration.Name, tainttoleration.ErrReasonNotMatch)}
		}
	}
	return nil
}

// insufficientResource is the first resource the pod requests beyond
// what is free on the node, in Kubernetes' order (pods, cpu, memory,
// ephemeral-storage, then extended resources). An extended resource the
// node does not offer at all is left out, as the kubelet does: a device
// plugin may not have registered it yet.
func insufficientResource(p *framework.PodInfo, node *framework.NodeInfo) *Rejection {
	alloc, used, req := &node.Allocatable, &node.Requested, &p.Requests
	out := func(name corev1.ResourceName, requested, used, capacity int64) *Rejection {
		return &Rejection{"OutOf" + string(name), fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			name, requested, used, capacity)}
	}
	if n := int64(len(node.Pods)); n+1 > alloc.AllowedPodNumber {
		return out(corev1.ResourcePods, 1, n, alloc.AllowedPodNumber)
	}
	if req.MilliCPU > 0 && req.MilliCPU > alloc.MilliCPU-used.MilliCPU {
		return out(corev1.ResourceCPU, req.MilliCPU, used.MilliCPU, alloc.MilliCPU)
	}
	if req.Memory > 0 && req.Memory > alloc.Memory-used.Memory {
		return out(corev1.ResourceMemory, req.Memory, used.Memory, alloc.Memory)
	}
	if req.EphemeralStorage > 0 && req.EphemeralStorage > alloc.EphemeralStorage-used.EphemeralStorage {
		return out(corev1.ResourceEphemeralStorage, req.EphemeralStorage, used.EphemeralStorage, alloc.EphemeralStorage)
	}
	for name, n := range req.ScalarResources {
		capacity, offered := alloc.ScalarResources[name]
		if offered && n > 0 && n > capacity-used.ScalarResources[name] {
			return out(name, n, used.ScalarResources[name], capacity)
		}
	}
	return nil
}
