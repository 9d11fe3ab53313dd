package lifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/mkube/mkube/client"
	kubetypes "github.com/mkube/mkube/kubelet/types"
	"github.com/mkube/mkube/scheduler/framework"
)

// Allocate makes pod's resources its allocation, if the node takes
// them: a pod new to the allocation (an earlier kubelet's) at once, a
// resize only if it fits; one that does not is remembered as pending,
// with why; deferred says to try it again --sync-frequency later.
func (a *Admitter) Allocate(ctx context.Context, pod *corev1.Pod) (deferred bool) {
	// Only this pod's sync changes its allocation, and syncs of one pod
	// never overlap: what is read here holds until it is written.
	a.mu.Lock()
	cur, ok := a.admitted[pod.UID]
	a.mu.Unlock()
	if !ok || sameResources(cur, pod) {
		a.NoteAdmitted(pod) // the common case: no resize, and no wait for admissions
		a.setPendingResize(pod, nil)
		return
	}
	a.admitMu.Lock() // a resize is judged against the other pods as admission does
	defer a.admitMu.Unlock()
	node, err := a.node.Node(ctx)
	if err != nil {
		a.setPendingResize(pod, ResizeCondition(corev1.PodReasonDeferred, err.Error()))
		return false
	}
	if reason, msg := a.resizeFits(pod, node); reason != "" {
		a.log.Info("resize cannot be allocated: "+msg, "pod", client.KeyOf(pod), "reason", reason)
		a.setPendingResize(pod, ResizeCondition(reason, msg))
		// A Deferred one is tried again later: other pods may have gone by then.
		return reason == corev1.PodReasonDeferred
	}
	a.log.Info("resize allocated", "pod", client.KeyOf(pod), "generation", pod.Generation)
	a.NoteAdmitted(pod)
	a.setPendingResize(pod, nil)
	return false
}

func (a *Admitter) setPendingResize(pod *corev1.Pod, c *corev1.PodCondition) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c == nil {
		delete(a.pendingResizes, pod.UID)
	} else {
		a.pendingResizes[pod.UID] = c
	}
}

// Allocation is pod with the resources allocated to it, and why a
// resize waits, if one does.
func (a *Admitter) Allocation(pod *corev1.Pod) (*corev1.Pod, *corev1.PodCondition) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur, ok := a.admitted[pod.UID]
	if !ok || sameResources(cur, pod) {
		return pod, nil
	}
	return allocatedPod(pod, cur), a.pendingResizes[pod.UID]
}

// resizeFits says why pod's new requests do not fit node: Infeasible
// beyond what the node can give any pod, Deferred beyond what its other
// pods leave (admission's own check, admission.go). Callers hold
// admitMu.
func (a *Admitter) resizeFits(pod *corev1.Pod, node *corev1.Node) (reason, message string) {
	info := a.nodeWithOthers(node, pod.UID)
	p := framework.NewPodInfo(pod)
	alloc := &info.Allocatable
	for _, r := range []struct {
		name      corev1.ResourceName
		requested int64
		capacity  int64
	}{{corev1.ResourceCPU, p.Requests.MilliCPU, alloc.MilliCPU}, {corev1.ResourceMemory, p.Requests.Memory, alloc.Memory}} {
		if r.requested > r.capacity {
			return corev1.PodReasonInfeasible, fmt.Sprintf("Node didn't have enough capacity: %s, requested: %d, capacity: %d", r.name, r.requested, r.capacity)
		}
	}
	if r := insufficientResource(p, info); r != nil {
		return corev1.PodReasonDeferred, r.Message
	}
	return "", ""
}

func ResizeCondition(reason, message string) *corev1.PodCondition {
	return &corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: reason, Message: message}
}

// sameResources: a and b's containers ask for the same resources.
func sameResources(a, b *corev1.Pod) bool {
	resources := func(p *corev1.Pod) []corev1.ResourceRequirements {
		var out []corev1.ResourceRequirements
		for _, c := range kubetypes.AllContainers(p) {
			out = append(out, c.Resources)
		}
		return out
	}
	return equality.Semantic.DeepEqual(resources(a), resources(b))
}

// allocatedPod is pod with the containers' resources of alloc, the pod
// as allocated.
func allocatedPod(pod, alloc *corev1.Pod) *corev1.Pod {
	out := pod.DeepCopy()
	for _, cs := range [][]corev1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range cs {
			cs[i] = AllocatedContainer(alloc, cs[i])
		}
	}
	return out
}

// AllocatedContainer is c with its resources as alloc has them.
func AllocatedContainer(alloc *corev1.Pod, c corev1.Container) corev1.Container {
	for _, a := range kubetypes.AllContainers(alloc) {
		if a.Name == c.Name {
			c.Resources = a.Resources
		}
	}
	return c
}
