// Package tainttoleration is the filter that keeps pods off nodes whose
// taints they do not tolerate.
//
// Seed: section 四 (污点 Taint 和 容忍 Toleration); old predicate name
// PodToleratesNodeTaints. Kubernetes plugin: TaintToleration.
//
// Rule: a node is rejected if it has a taint with effect NoSchedule or
// NoExecute that none of the pod's tolerations tolerates. PreferNoSchedule
// taints never reject: they only lower the score, which a later scoring
// plugin does.
//
// A toleration tolerates a taint when (Tolerates below):
//
//	effect:   toleration.effect is empty, or equals taint.effect
//	key:      toleration.key is empty (then operator must be Exists), or equals taint.key
//	operator: Exists → any value; Equal (or empty) → toleration.value == taint.value
//
// Example: node01 has taint key1=value1:NoSchedule (kubectl taint node node01
// key1=value1:NoSchedule).
//
//	no tolerations                                      → rejected: node(s) had untolerated taint {key1: value1}
//	{key: key1, operator: Equal, value: value1}         → fits (effect empty matches every effect)
//	{key: key1, operator: Exists, effect: NoSchedule}   → fits
//	{key: key1, operator: Equal, value: value2}         → rejected
//	{operator: Exists}                                  → fits: tolerates every taint
//	{key: key1, operator: Exists, effect: NoExecute}    → rejected: wrong effect
package tainttoleration

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "TaintToleration"

// TaintToleration is the filter.
type TaintToleration struct{}

// New returns the plugin.
func New() *TaintToleration { return &TaintToleration{} }

func (*TaintToleration) Name() string { return Name }

// Filter rejects the node if one of its NoSchedule or NoExecute taints is
// not tolerated; the reason names the first such taint.
func (*TaintToleration) Filter(pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	for i := range node.Node().Spec.Taints {
		taint := &node.Node().Spec.Taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !TolerationsTolerateTaint(pod.Pod.Spec.Tolerations, taint) {
			// Removing other pods would not remove the taint.
			return framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value))
		}
	}
	return nil
}

// EventsToRegister: a new node, or a node whose taints changed.
func (*TaintToleration) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}}
}

// TolerationsTolerateTaint reports whether any toleration tolerates taint.
func TolerationsTolerateTaint(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if Tolerates(&tolerations[i], taint) {
			return true
		}
	}
	return false
}

// Tolerates is Kubernetes' Toleration.ToleratesTaint. The numeric
// operators Lt and Gt (the alpha TaintTolerationComparisonOperators
// feature) are treated as with the feature off: they tolerate nothing.
func Tolerates(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		return t.Value == taint.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
