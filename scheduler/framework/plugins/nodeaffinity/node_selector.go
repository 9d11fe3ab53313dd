package nodeaffinity

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// nodeFieldName is the one field matchFields may name (Kubernetes defines
// no other node field for it).
const nodeFieldName = "metadata.name"

// nodeSelectorTerm is one nodeSelectorTerm, parsed once per cycle:
//
//	matchExpressions  ANDed, on node labels: In, NotIn, Exists, DoesNotExist, Gt, Lt
//	matchFields       ANDed, on metadata.name: In or NotIn with one value
//
// A term with neither matches no node; a term that does not parse (the API
// server should have refused it) matches no node either.
type nodeSelectorTerm struct {
	labels labels.Selector    // nil without matchExpressions
	fields []fieldRequirement // nil without matchFields
	err    error
}

// fieldRequirement is one matchFields entry: the field's value must
// (in) or must not (!in) equal value.
type fieldRequirement struct {
	key, value string
	in         bool
}

// selectionOperators maps the node selector operators onto the label
// selector's. Gt and Lt compare the label's value as an integer:
// {key: cpu-count, operator: Gt, values: ["8"]} matches cpu-count=16 and
// not cpu-count=4, nor a node without the label.
var selectionOperators = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

func newNodeSelectorTerm(term *corev1.NodeSelectorTerm) nodeSelectorTerm {
	var t nodeSelectorTerm
	var errs []error
	if len(term.MatchExpressions) > 0 {
		sel := labels.NewSelector()
		for _, e := range term.MatchExpressions {
			op, ok := selectionOperators[e.Operator]
			if !ok {
				errs = append(errs, fmt.Errorf("matchExpressions: operator %q is not supported", e.Operator))
				continue
			}
			r, err := labels.NewRequirement(e.Key, op, e.Values)
			if err != nil {
				errs = append(errs, fmt.Errorf("matchExpressions: %w", err))
				continue
			}
			sel = sel.Add(*r)
		}
		t.labels = sel
	}
	for _, e := range term.MatchFields {
		if (e.Operator != corev1.NodeSelectorOpIn && e.Operator != corev1.NodeSelectorOpNotIn) || len(e.Values) != 1 {
			errs = append(errs, fmt.Errorf("matchFields: %s %s %v: only In and NotIn with one value are supported", e.Key, e.Operator, e.Values))
			continue
		}
		t.fields = append(t.fields, fieldRequirement{key: e.Key, value: e.Values[0], in: e.Operator == corev1.NodeSelectorOpIn})
	}
	t.err = errors.Join(errs...)
	return t
}

func (t *nodeSelectorTerm) matches(node *corev1.Node) bool {
	if t.err != nil || (t.labels == nil && t.fields == nil) {
		return false
	}
	if t.labels != nil && !t.labels.Matches(labels.Set(node.Labels)) {
		return false
	}
	for _, f := range t.fields {
		var v string // a field other than metadata.name has no value
		if f.key == nodeFieldName {
			v = node.Name
		}
		if (v == f.value) != f.in {
			return false
		}
	}
	return true
}

// requiredNodeAffinity is everything a pod requires of a node's labels:
// spec.nodeSelector AND (any of the required affinity's terms).
type requiredNodeAffinity struct {
	nodeSelector map[string]string
	terms        []nodeSelectorTerm
	hasAffinity  bool // the pod has requiredDuringSchedulingIgnoredDuringExecution
}

func hasRequiredAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil
}

func newRequiredNodeAffinity(pod *corev1.Pod) requiredNodeAffinity {
	r := requiredNodeAffinity{nodeSelector: pod.Spec.NodeSelector}
	if hasRequiredAffinity(pod) {
		r.hasAffinity = true
		terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		r.terms = make([]nodeSelectorTerm, len(terms))
		for i := range terms {
			r.terms[i] = newNodeSelectorTerm(&terms[i])
		}
	}
	return r
}

// isEmpty: the pod requires nothing of node labels.
func (r *requiredNodeAffinity) isEmpty() bool { return len(r.nodeSelector) == 0 && !r.hasAffinity }

// matchesNodeSelector: every key: value of nodeSelector is a node label.
func matchesNodeSelector(nodeSelector map[string]string, node *corev1.Node) bool {
	for k, v := range nodeSelector {
		if got, ok := node.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// matchesAffinity: one of the required terms matches (true if the pod
// has no required affinity).
func (r *requiredNodeAffinity) matchesAffinity(node *corev1.Node) bool {
	if !r.hasAffinity {
		return true
	}
	for i := range r.terms {
		if r.terms[i].matches(node) {
			return true // terms are ORed
		}
	}
	return false // including a required affinity with no terms at all
}

// preferredTerm is a preferredDuringSchedulingIgnoredDuringExecution
// entry, parsed.
type preferredTerm struct {
	term   nodeSelectorTerm
	weight int64
}

func newPreferredTerms(pod *corev1.Pod) []preferredTerm {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	var out []preferredTerm
	for i := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		p := &a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[i]
		if p.Weight == 0 {
			continue
		}
		out = append(out, preferredTerm{newNodeSelectorTerm(&p.Preference), int64(p.Weight)})
	}
	return out
}
