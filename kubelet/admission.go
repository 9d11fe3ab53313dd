package kubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// Static pods, the node's own, are not admitted here (staticpods.go).
//
// A rejected pod never runs: it is Failed at once, with that reason and
// the message "Pod was rejected: ...", and its controller (a ReplicaSet,
// a StatefulSet) replaces it. Worked example, the StatefulSet
// conformance spec "should recreate evicted statefulset": a plain pod
// holds hostPort 21017 on node01; a StatefulSet's pod pinned to node01
// asks for it too, is rejected, deleted and recreated by its controller
// until the plain pod goes, then runs.

// rejection is why a pod may not run on the node.
type rejection struct{ reason, message string }

// admitPod decides whether pod, new to the node, may run here. Admission
// is serial per node, as the kubelet's sync loop admits one pod after
// another: two pods asking for the last port cannot both be let in.
func (k *Kubelet) admitPod(ctx context.Context, pod *corev1.Pod) (*rejection, error) {
	node, err := k.nodeObject(ctx)
	if err != nil {
		return nil, err
	}
	k.admitMu.Lock()
	defer k.admitMu.Unlock()
	info := k.nodeWithOthers(node, pod.UID)
	if r := sysctlRejection(pod, k.cfg.AllowedUnsafeSysctls); r != nil { // sysctls.go
		return r, nil
	}
	r, err := filterWithFreshNode(pod, info, func() (*corev1.Node, error) { return k.readNode(ctx) })
	if r != nil || err != nil {
		return r, err
	}
	k.noteAdmitted(pod)
	return nil, nil
}

// nodeWithOthers is node with the pods admitted to it but uid: what a
// pod is judged against. Callers hold admitMu.
func (k *Kubelet) nodeWithOthers(node *corev1.Node, uid types.UID) *framework.NodeInfo {
	info := framework.NewNodeInfo()
	info.SetNode(node)
	k.mu.Lock()
	defer k.mu.Unlock()
	for other, p := range k.admitted {
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
func filterWithFreshNode(pod *corev1.Pod, info *framework.NodeInfo, fresh func() (*corev1.Node, error)) (*rejection, error) {
	r := generalFilter(pod, info)
	if r == nil || (r.reason != nodeaffinity.Name && r.reason != tainttoleration.Name) {
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

// noteAdmitted counts pod among the node's pods for later admissions, as
// it is now (a resize changes its requests). A pod an earlier kubelet
// started is counted this way too, without a check: it runs already.
func (k *Kubelet) noteAdmitted(pod *corev1.Pod) {
	k.mu.Lock()
	k.admitted[pod.UID] = pod
	k.mu.Unlock()
}

// forgetAdmitted stops counting the pods named key other than keep: they
// finished, or are gone from the API server.
func (k *Kubelet) forgetAdmitted(key string, keep types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for uid, p := range k.admitted {
		if uid != keep && client.KeyOf(p) == key {
			delete(k.admitted, uid)
			delete(k.pendingResizes, uid)
		}
	}
}

// rejectPod fails pod for r, as the kubelet's rejectPod: the status says
// only why (no containers were made), the event too.
func (k *Kubelet) rejectPod(ctx context.Context, pod *corev1.Pod, r *rejection) error {
	k.recorder.Event(pod, corev1.EventTypeWarning, r.reason, "%s", r.message)
	k.log.Info("pod rejected: "+r.message, "pod", client.KeyOf(pod), "reason", r.reason)
	next := pod.DeepCopy()
	next.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: r.reason, Message: "Pod was rejected: " + r.message, QOSClass: pod.Status.QOSClass}
	err := k.client.UpdateStatus(ctx, client.Pods, pod.Namespace, pod.Name, next, &corev1.Pod{})
	if apierrors.IsNotFound(err) {
		return nil // gone meanwhile
	}
	return err // a conflict is retried: the pod is admitted anew
}

// nodeObject is this node as the API server has it (labels and taints
// are users' to change): from the fleet's node informer, or read once if
// the informer has not seen it yet.
func (k *Kubelet) nodeObject(ctx context.Context) (*corev1.Node, error) {
	if obj, ok := k.fleet.nodes.Cache().Get(k.cfg.NodeName); ok {
		return obj.(*corev1.Node), nil
	}
	return k.readNode(ctx)
}

// readNode is this node as the API server has it now.
func (k *Kubelet) readNode(ctx context.Context) (*corev1.Node, error) {
	node := &corev1.Node{}
	if err := k.client.Get(ctx, client.Nodes, "", k.cfg.NodeName, node); err != nil {
		return nil, fmt.Errorf("get node for admission: %w", err)
	}
	return node, nil
}

// generalFilter is Kubernetes' kubelet generalFilter: the scheduler's
// AdmissionCheck (resources, node affinity, node name, host ports), then
// the node's NoExecute taints; the first failure is the reason.
func generalFilter(pod *corev1.Pod, node *framework.NodeInfo) *rejection {
	p := framework.NewPodInfo(pod)
	if r := insufficientResource(p, node); r != nil {
		return r
	}
	state := framework.NewCycleState()
	for _, filter := range []framework.FilterPlugin{nodeaffinity.New(), nodename.New(), nodeports.New()} {
		if st := filter.Filter(state, p, node); !st.IsSuccess() {
			return &rejection{filter.Name(), fmt.Sprintf("Predicate %s failed: %s", filter.Name(), st.Message())}
		}
	}
	for i := range node.Node().Spec.Taints {
		t := &node.Node().Spec.Taints[i]
		if t.Effect == corev1.TaintEffectNoExecute && !tainttoleration.TolerationsTolerateTaint(pod.Spec.Tolerations, t) {
			return &rejection{tainttoleration.Name, fmt.Sprintf("Predicate %s failed: %s", tainttoleration.Name, tainttoleration.ErrReasonNotMatch)}
		}
	}
	return nil
}

// insufficientResource is the first resource the pod requests beyond
// what is free on the node, in Kubernetes' order (pods, cpu, memory,
// ephemeral-storage, then extended resources). An extended resource the
// node does not offer at all is left out, as the kubelet does: a device
// plugin may not have registered it yet.
func insufficientResource(p *framework.PodInfo, node *framework.NodeInfo) *rejection {
	alloc, used, req := &node.Allocatable, &node.Requested, &p.Requests
	out := func(name corev1.ResourceName, requested, used, capacity int64) *rejection {
		return &rejection{"OutOf" + string(name), fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
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
