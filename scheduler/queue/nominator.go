package queue

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// nominator remembers which pods are nominated to which node (Kubernetes'
// PodNominator): a pod that preempted waits in the queue for its victims
// to terminate, and until it is bound the room they free is its own. The
// scheduler counts these pods on their nodes when it filters a pod of
// lower or equal priority (NominatedPodsFor,
// framework.RunFilterPluginsWithNominatedPods).
//
// A nomination comes from the pod's status.nominatedNodeName (so it
// survives a restart of the scheduler) or, before that status has been
// written, from the preemption itself (AddNominatedPod). It ends when the
// pod is bound or assumed, deleted, or a later attempt clears it.
//
// It is guarded by the queue's mutex.
type nominator struct {
	nodeToPods map[string][]*framework.PodInfo // node → pods nominated there
	podToNode  map[string]string               // pod key → its node
}

func newNominator() nominator {
	return nominator{nodeToPods: map[string][]*framework.PodInfo{}, podToNode: map[string]string{}}
}

// add nominates pi to node, or, if node is "", to its
// status.nominatedNodeName (if any); any older nomination is dropped.
func (n *nominator) add(pi *framework.PodInfo, node string) {
	n.delete(pi.Key)
	if node == "" {
		node = pi.Pod.Status.NominatedNodeName
	}
	if node == "" {
		return
	}
	n.podToNode[pi.Key] = node
	n.nodeToPods[node] = append(n.nodeToPods[node], pi)
}

// update takes a new version of a pod. A nomination the status does not
// show yet (the scheduler's patch is on its way) is kept: only a status
// that adds, changes or removes nominatedNodeName overrides it.
func (n *nominator) update(oldPod *corev1.Pod, pi *framework.PodInfo) {
	node := ""
	if oldPod.Status.NominatedNodeName == "" && pi.Pod.Status.NominatedNodeName == "" {
		node = n.podToNode[pi.Key]
	}
	n.add(pi, node)
}

// delete ends the pod's nomination; false if it had none.
func (n *nominator) delete(key string) bool {
	node, ok := n.podToNode[key]
	if !ok {
		return false
	}
	delete(n.podToNode, key)
	pods := n.nodeToPods[node]
	for i, p := range pods {
		if p.Key == key {
			pods = append(pods[:i:i], pods[i+1:]...) // copy: NominatedPodsForNode's callers may hold the old slice
			break
		}
	}
	if len(pods) == 0 {
		delete(n.nodeToPods, node)
	} else {
		n.nodeToPods[node] = pods
	}
	return true
}

// AddNominatedPod records the outcome of a preemption: pi is nominated to
// nominating's node, or its nomination is cleared. ModeNoop changes nothing.
func (q *PriorityQueue) AddNominatedPod(pi *framework.PodInfo, nominating framework.NominatingInfo) {
	if nominating.Mode != framework.ModeOverride {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if nominating.NominatedNodeName == "" {
		q.nominator.delete(pi.Key)
		return
	}
	q.nominator.add(pi, nominating.NominatedNodeName)
}

// DeleteNominatedPodIfExists ends pod's nomination (it was assumed on a
// node); it reports whether there was one.
func (q *PriorityQueue) DeleteNominatedPodIfExists(pod *corev1.Pod) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.nominator.delete(framework.PodKey(pod))
}

// NominatedNodeName is the node pod is nominated to, "" if none.
func (q *PriorityQueue) NominatedNodeName(pod *corev1.Pod) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.nominator.podToNode[framework.PodKey(pod)]
}

// NominatedPodsForNode returns the pods nominated to node.
func (q *PriorityQueue) NominatedPodsForNode(node string) []*framework.PodInfo {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.nominator.nodeToPods[node]
}

// NominatedPodsFor returns, per node, the nominated pods that count
// against pod: those of higher or equal priority, other than pod itself.
// nil when there are none (the usual case, which then costs one map
// length check per cycle).
func (q *PriorityQueue) NominatedPodsFor(pod *corev1.Pod) framework.NominatedPods {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.nominator.podToNode) == 0 {
		return nil
	}
	key, prio := framework.PodKey(pod), framework.PodPriority(pod)
	var out framework.NominatedPods
	for node, pods := range q.nominator.nodeToPods {
		for _, p := range pods {
			if p.Key == key || p.Priority < prio {
				continue
			}
			if out == nil {
				out = framework.NominatedPods{}
			}
			out[node] = append(out[node], p)
		}
	}
	return out
}
