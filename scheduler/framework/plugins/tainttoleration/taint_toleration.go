// Package tainttoleration keeps pods off nodes whose taints they do not
// tolerate, and away from nodes that would rather not have them.
//
// Seed: section 四 (污点 Taint 和 容忍 Toleration); old predicate name
// PodToleratesNodeTaints, old priority TaintTolerationPriority (seed 003).
// Kubernetes plugin: TaintToleration.
//
// Filter rule: a node is rejected if it has a taint with effect NoSchedule
// or NoExecute that none of the pod's tolerations tolerates.
// PreferNoSchedule taints never reject ("尽量避免"): they lower the score.
//
// Score rule (TaintTolerationPriority), reversed so fewer is better:
//
//	raw(node)   = number of the node's PreferNoSchedule taints the pod does not tolerate
//	score(node) = 100 - 100 × raw(node) / max over feasible nodes of raw   (100 for all if max is 0)
//
// Only tolerations with effect PreferNoSchedule or empty count here. When
// no feasible node has a PreferNoSchedule taint, every node would score
// 100 (Kubernetes scores them so); mkube skips the plugin instead, which
// ranks the nodes the same and keeps the explanation to the point.
// Worked example (seed 四 其它注意事项 3: a master tainted
// node-role.kubernetes.io/master=:PreferNoSchedule "防止资源浪费"): master
// raw 1, node01 and node02 raw 0 → master 0, the nodes 100. With the
// plugin's default weight 3 the master is 300 behind: pods go there only
// when the other nodes are full or filtered out.
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
//
// It all lives in taint_toleration.go.
package tainttoleration

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "TaintToleration"

// ErrReasonNotMatch is Kubernetes' reason when the kubelet's admission
// finds a NoExecute taint the pod does not tolerate (kubelet/admission.go).
const ErrReasonNotMatch = "node(s) had taints that the pod didn't tolerate"

const preScoreStateKey framework.StateKey = "PreScore" + Name

// TaintToleration is the plugin.
type TaintToleration struct{}

// New returns the plugin.
func New() *TaintToleration { return &TaintToleration{} }

func (*TaintToleration) Name() string { return Name }

// Filter rejects the node if one of its NoSchedule or NoExecute taints is
// not tolerated; the reason names the first such taint.
func (*TaintToleration) Filter(_ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
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

var skipScore = framework.NewStatus(framework.Skip, "no feasible node has a PreferNoSchedule taint")

// PreScore keeps the tolerations that matter for PreferNoSchedule taints,
// or skips if no node has such a taint.
func (*TaintToleration) PreScore(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, _ framework.NodeInfoLister) *framework.Status {
	if !slices.ContainsFunc(nodes, hasPreferNoSchedule) {
		return skipScore
	}
	state.Write(preScoreStateKey, preferNoScheduleTolerations(pod.Pod.Spec.Tolerations))
	return nil
}

func hasPreferNoSchedule(n *framework.NodeInfo) bool {
	for i := range n.Node().Spec.Taints {
		if n.Node().Spec.Taints[i].Effect == corev1.TaintEffectPreferNoSchedule {
			return true
		}
	}
	return false
}

func preferNoScheduleTolerations(tolerations []corev1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range tolerations {
		if t.Effect == "" || t.Effect == corev1.TaintEffectPreferNoSchedule {
			out = append(out, t)
		}
	}
	return out
}

// Score counts the node's PreferNoSchedule taints the pod does not
// tolerate.
func (*TaintToleration) Score(state *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	if !hasPreferNoSchedule(node) {
		return 0, nil
	}
	tolerations, err := framework.ReadAs[[]corev1.Toleration](state, preScoreStateKey)
	if err != nil {
		tolerations = preferNoScheduleTolerations(pod.Pod.Spec.Tolerations)
	}
	var intolerable int64
	for i := range node.Node().Spec.Taints {
		taint := &node.Node().Spec.Taints[i]
		if taint.Effect == corev1.TaintEffectPreferNoSchedule && !TolerationsTolerateTaint(tolerations, taint) {
			intolerable++
		}
	}
	return intolerable, nil
}

// NormalizeScore reverses the counts: the node with the most intolerable
// taints scores 0, a node with none 100.
func (*TaintToleration) NormalizeScore(_ *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	framework.DefaultNormalizeScore(true, scores)
	return nil
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
