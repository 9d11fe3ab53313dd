package preemption

import (
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// SelectVictimsOnNode finds the fewest, least important pods of node whose
// eviction lets pod fit there (Kubernetes' rule of the same name). state
// and node are copies it changes freely; nominated are the pods nominated
// to the node that count against pod. It returns the victims, most
// important first, and how many of them a PodDisruptionBudget protects.
//
//  1. Take every pod of lower priority off the node. None: the node is
//     not a candidate ("No preemption victims found for incoming pod").
//  2. Run the filters. The pod does not fit even so: not a candidate; the
//     filter's reason says why (Kubernetes does not look further, e.g. for
//     a pod that needs affinity to one of the victims).
//  3. Reprieve: put the pods back one by one, most important first
//     (higher priority, then the one that started earlier), keeping each
//     one with which the pod still fits; the others are the victims. The
//     pods whose eviction would violate a PodDisruptionBudget are tried
//     first, so that they are the ones kept when there is a choice.
//
// Example: node of 2 cpu; a (priority 10, 1 cpu), b and c (priority 0,
// 500m each); the pod (priority 100) wants 1 cpu. Off: a, b, c; the pod
// fits. Back: a fits alongside, kept; b does not, victim; c neither,
// victim: victims [b, c]. Had a budget protected b (disruptionsAllowed 0),
// b would have been tried first and kept; then a no longer fits and is
// the victim, and c fits alongside b: victims [a], no violation, although
// a has the higher priority.
func (ev *Evaluator) SelectVictimsOnNode(state *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo,
	nominated []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*corev1.Pod, int, *framework.Status) {
	removePod := func(p *framework.PodInfo) *framework.Status {
		node.RemovePod(p.Key)
		return ev.fwk.RunPreFilterExtensionRemovePod(state, pod, p, node)
	}
	addPod := func(p *framework.PodInfo) *framework.Status {
		node.AddPodInfo(p)
		return ev.fwk.RunPreFilterExtensionAddPod(state, pod, p, node)
	}

	// 1) Every pod of lower priority off.
	prio := pod.Priority
	var potential []*framework.PodInfo
	for _, p := range node.Pods {
		if p.Priority < prio {
			potential = append(potential, p)
		}
	}
	if len(potential) == 0 {
		return nil, 0, noVictims
	}
	for _, p := range potential {
		if st := removePod(p); !st.IsSuccess() {
			return nil, 0, st
		}
	}
	// 2) Does the pod fit now?
	if st := ev.fwk.RunFilterPluginsWithNominatedPods(state, pod, node, nominated); !st.IsSuccess() {
		return nil, 0, st
	}
	// 3) Reprieve, most important first; budget-protected pods before the others.
	slices.SortStableFunc(potential, func(a, b *framework.PodInfo) int { return compareImportance(a.Pod, b.Pod) })
	violating, nonViolating := filterPodsWithPDBViolation(potential, pdbs)
	var victims []*corev1.Pod
	numViolating := 0
	reprieve := func(p *framework.PodInfo) (bool, *framework.Status) {
		if st := addPod(p); !st.IsSuccess() {
			return false, st
		}
		if ev.fwk.RunFilterPluginsWithNominatedPods(state, pod, node, nominated).IsSuccess() {
			return true, nil // it stays
		}
		if st := removePod(p); !st.IsSuccess() {
			return false, st
		}
		victims = append(victims, p.Pod)
		return false, nil
	}
	for _, p := range violating {
		kept, st := reprieve(p)
		if !st.IsSuccess() {
			return nil, 0, st
		}
		if !kept {
			numViolating++
		}
	}
	for _, p := range nonViolating {
		if _, st := reprieve(p); !st.IsSuccess() {
			return nil, 0, st
		}
	}
	if len(violating) > 0 && len(nonViolating) > 0 {
		// Two runs of most-important-first: merge them into one.
		slices.SortStableFunc(victims, compareImportance)
	}
	return victims, numViolating, nil
}

var noVictims = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNoVictims).WithPlugin(Name)

// compareImportance orders pods most important first (Kubernetes'
// MoreImportantPod): higher priority, then the earlier start time (a pod
// that has run longer has more work to lose). Pods that have not started
// (no status.startTime) count as starting now, after every pod that has.
func compareImportance(a, b *corev1.Pod) int {
	pa, pb := framework.PodPriority(a), framework.PodPriority(b)
	switch {
	case pa > pb:
		return -1
	case pa < pb:
		return 1
	}
	sa, sb := startTime(a), startTime(b)
	switch {
	case sa < sb:
		return -1
	case sa > sb:
		return 1
	}
	return 0
}

// startTime is status.startTime in Unix nanoseconds; MaxInt64 (later than
// any real start) for a pod that has not started.
func startTime(p *corev1.Pod) int64 {
	if p.Status.StartTime == nil {
		return math.MaxInt64
	}
	return p.Status.StartTime.UnixNano()
}
