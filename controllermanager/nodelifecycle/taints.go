package nodelifecycle

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionTaint: a node in this condition gets this taint (seed 003
// section 6.5, "问题节点标识": added automatically when the node enters the
// state). Kubernetes' TaintNodesByCondition gives the NoSchedule ones, so
// the scheduler stays away; TaintBasedEvictions gives the NoExecute ones,
// so the taint eviction controller evicts the pods that do not tolerate
// them (every pod tolerates not-ready and unreachable for 300s by default,
// the API server's DefaultTolerationSeconds).
type conditionTaint struct {
	condition corev1.NodeConditionType
	status    corev1.ConditionStatus
	taint     corev1.Taint
}

var conditionTaints = []conditionTaint{
	{corev1.NodeReady, corev1.ConditionFalse, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}},
	{corev1.NodeReady, corev1.ConditionFalse, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}},
	{corev1.NodeReady, corev1.ConditionUnknown, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}},
	{corev1.NodeReady, corev1.ConditionUnknown, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}},
	{corev1.NodeMemoryPressure, corev1.ConditionTrue, corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}},
	{corev1.NodeDiskPressure, corev1.ConditionTrue, corev1.Taint{Key: corev1.TaintNodeDiskPressure, Effect: corev1.TaintEffectNoSchedule}},
	{corev1.NodePIDPressure, corev1.ConditionTrue, corev1.Taint{Key: corev1.TaintNodePIDPressure, Effect: corev1.TaintEffectNoSchedule}},
	{corev1.NodeNetworkUnavailable, corev1.ConditionTrue, corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}},
}

// unschedulableTaint marks a cordoned node (spec.unschedulable), as
// Kubernetes does, so `kubectl describe node` shows why nothing lands.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// managed says whether this controller owns a taint: it adds and removes
// these and never touches any other (a user's, or --register-with-taints).
func managed(t corev1.Taint) bool {
	if t.MatchTaint(&unschedulableTaint) {
		return true
	}
	return slices.ContainsFunc(conditionTaints, func(ct conditionTaint) bool { return t.MatchTaint(&ct.taint) })
}

// wantTaints returns the taints the node should carry: its own taints that
// this controller does not manage, then the managed ones its conditions
// and spec call for. A managed taint already present keeps its timeAdded
// (the taint eviction controller counts tolerationSeconds from it); a new
// NoExecute taint is stamped now.
func wantTaints(node *corev1.Node, now metav1.Time) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range node.Spec.Taints {
		if !managed(t) {
			out = append(out, t)
		}
	}
	add := func(t corev1.Taint) {
		if i := slices.IndexFunc(node.Spec.Taints, func(have corev1.Taint) bool { return have.MatchTaint(&t) }); i >= 0 {
			out = append(out, node.Spec.Taints[i])
			return
		}
		if t.Effect == corev1.TaintEffectNoExecute {
			t.TimeAdded = &now
		}
		out = append(out, t)
	}
	for _, ct := range conditionTaints {
		if c := condition(node.Status.Conditions, ct.condition); c != nil && c.Status == ct.status {
			add(ct.taint)
		}
	}
	if node.Spec.Unschedulable {
		add(unschedulableTaint)
	}
	return out
}

// sameTaints compares taint lists as sets of key, effect and value.
func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for _, t := range a {
		if !slices.ContainsFunc(b, func(u corev1.Taint) bool { return u.MatchTaint(&t) && u.Value == t.Value }) {
			return false
		}
	}
	return true
}
