package framework

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// AffinityTerm is a pod (anti-)affinity term of seed section 三.3 parsed
// once, so that matching it against thousands of pods does not parse its
// selectors thousands of times:
//
//	podAffinity:
//	  requiredDuringSchedulingIgnoredDuringExecution:
//	  - topologyKey: myname          → TopologyKey
//	    namespaces: [default]        → Namespaces
//	    namespaceSelector: {...}     → NamespaceSelector
//	    labelSelector:               → Selector
//	      matchExpressions:
//	      - {key: app, operator: In, values: [myapp-demo]}
//
// A term selects the pods whose labels match Selector and whose namespace
// is in Namespaces or has labels NamespaceSelector matches. With neither
// namespaces nor namespaceSelector, the term means the pod's own
// namespace; an empty namespaceSelector ({}) means every namespace.
type AffinityTerm struct {
	Namespaces        sets.Set[string]
	Selector          labels.Selector
	TopologyKey       string
	NamespaceSelector labels.Selector
}

// Matches reports whether pod, whose namespace has labels nsLabels, is
// selected by the term (Kubernetes' AffinityTerm.Matches).
func (t *AffinityTerm) Matches(pod *corev1.Pod, nsLabels labels.Set) bool {
	if t.Namespaces.Has(pod.Namespace) || t.NamespaceSelector.Matches(nsLabels) {
		return t.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// WeightedAffinityTerm is a preferred term with its weight (1-100).
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// affinityTerms is what NewPodInfo parses out of spec.affinity.
type affinityTerms struct {
	requiredAffinity, requiredAntiAffinity   []AffinityTerm
	preferredAffinity, preferredAntiAffinity []WeightedAffinityTerm
}

// parseAffinityTerms parses the pod's inter-pod affinity terms. A term
// whose selector does not parse (the API server should have refused it) is
// reported in the error and left out.
func parseAffinityTerms(pod *corev1.Pod) (affinityTerms, error) {
	var out affinityTerms
	a := pod.Spec.Affinity
	if a == nil || (a.PodAffinity == nil && a.PodAntiAffinity == nil) {
		return out, nil
	}
	var errs []error
	required := func(terms []corev1.PodAffinityTerm) []AffinityTerm {
		var parsed []AffinityTerm
		for i := range terms {
			t, err := newAffinityTerm(pod, &terms[i])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			parsed = append(parsed, t)
		}
		return parsed
	}
	preferred := func(terms []corev1.WeightedPodAffinityTerm) []WeightedAffinityTerm {
		var parsed []WeightedAffinityTerm
		for i := range terms {
			if terms[i].Weight == 0 {
				continue // weighs nothing: Kubernetes skips it too
			}
			t, err := newAffinityTerm(pod, &terms[i].PodAffinityTerm)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			parsed = append(parsed, WeightedAffinityTerm{t, terms[i].Weight})
		}
		return parsed
	}
	if p := a.PodAffinity; p != nil {
		out.requiredAffinity = required(p.RequiredDuringSchedulingIgnoredDuringExecution)
		out.preferredAffinity = preferred(p.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if p := a.PodAntiAffinity; p != nil {
		out.requiredAntiAffinity = required(p.RequiredDuringSchedulingIgnoredDuringExecution)
		out.preferredAntiAffinity = preferred(p.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return out, errors.Join(errs...)
}

func newAffinityTerm(pod *corev1.Pod, term *corev1.PodAffinityTerm) (AffinityTerm, error) {
	// A nil labelSelector selects nothing; {} selects every pod.
	selector, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return AffinityTerm{}, fmt.Errorf("labelSelector: %w", err)
	}
	nsSelector, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return AffinityTerm{}, fmt.Errorf("namespaceSelector: %w", err)
	}
	namespaces := sets.New(term.Namespaces...)
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		namespaces.Insert(pod.Namespace)
	}
	return AffinityTerm{Namespaces: namespaces, Selector: selector, TopologyKey: term.TopologyKey, NamespaceSelector: nsSelector}, nil
}
