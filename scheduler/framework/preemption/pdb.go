package preemption

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/scheduler/framework"
)

// PDBLister lists the PodDisruptionBudgets as the scheduler's informer
// holds them; the disruption controller keeps their status current.
type PDBLister interface {
	List() []*policyv1.PodDisruptionBudget
}

// filterPodsWithPDBViolation splits pods (most important first) into
// those whose eviction would take a PodDisruptionBudget below its minimum
// and the others (Kubernetes' rule of the same name). Each budget allows
// status.disruptionsAllowed evictions; every pod it selects, in order,
// uses one up, and a pod that finds none left violates it:
//
//	budget app=web, disruptionsAllowed 1; pods web-1, web-2, db-1
//	web-1 → 0 left, fine; web-2 → -1, violation; db-1 → no budget, fine
//	violating [web-2], non-violating [web-1, db-1]
//
// A budget selects pods of its own namespace whose labels its selector
// matches; an empty or missing selector selects none. A pod the budget
// already lists in status.disruptedPods (evicted, on its way out) uses up
// nothing: the budget counted it already.
func filterPodsWithPDBViolation(pods []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	allowed := make([]int32, len(pdbs))
	selectors := make([]labels.Selector, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			sel = labels.Nothing() // an invalid selector matches no pod
		}
		selectors[i] = sel
	}
	for _, p := range pods {
		violates := false
		if len(p.Pod.Labels) > 0 { // a pod without labels matches no budget
			for i, pdb := range pdbs {
				if pdb.Namespace != p.Pod.Namespace || selectors[i].Empty() || !selectors[i].Matches(labels.Set(p.Pod.Labels)) {
					continue
				}
				if _, disrupted := pdb.Status.DisruptedPods[p.Pod.Name]; disrupted {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violates = true
				}
			}
		}
		if violates {
			violating = append(violating, p)
		} else {
			nonViolating = append(nonViolating, p)
		}
	}
	return violating, nonViolating
}
