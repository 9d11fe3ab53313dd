package quota

import (
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ListFunc returns the objects of an evaluator's resource in a namespace.
type ListFunc func(e Evaluator, namespace string) ([]runtime.Object, error)

// CalculateUsage recounts what quota q's namespace uses of each name in
// q's spec.hard that one of evaluators counts: each evaluator whose
// resource q limits lists its objects, keeps those in all of q's scopes,
// and adds up their usage (Kubernetes' CalculateUsage). A name no
// evaluator counts is left out, so that the caller keeps what it had; so
// is a name whose listing failed, with the error returned.
func CalculateUsage(q *corev1.ResourceQuota, evaluators []Evaluator, list ListFunc, now time.Time) (corev1.ResourceList, error) {
	hard := Names(q.Spec.Hard)
	used := corev1.ResourceList{}
	var errs []error
	for _, e := range evaluators {
		names := e.Matching(hard)
		if len(names) == 0 {
			continue
		}
		sum, err := usageOf(e, q, names, list, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		used = Add(used, sum)
	}
	return used, errors.Join(errs...)
}

// usageOf is the usage of one resource in q's namespace and scopes, on
// names, each from zero.
func usageOf(e Evaluator, q *corev1.ResourceQuota, names []corev1.ResourceName, list ListFunc, now time.Time) (corev1.ResourceList, error) {
	sum := corev1.ResourceList{}
	for _, name := range names {
		sum[name] = zero()
	}
	objs, err := list(e, q.Namespace)
	if err != nil {
		return nil, err
	}
	selectors := ScopeSelectors(q)
	for _, obj := range objs {
		in := true
		for _, sel := range selectors {
			ok, err := e.MatchesScope(sel, obj)
			if err != nil {
				return nil, err
			}
			in = in && ok
		}
		if !in {
			continue
		}
		usage, err := e.Usage(obj, now)
		if err != nil {
			return nil, err
		}
		sum = Add(sum, Mask(usage, names))
	}
	return sum, nil
}

// Unknown returns the names of hard that evaluators count but used has
// no figure for yet: a quota with such a name cannot be charged until
// the controller has counted it (admission's "status unknown").
func Unknown(hard, used corev1.ResourceList, names []corev1.ResourceName) []corev1.ResourceName {
	want := sets.New(names...)
	var out []corev1.ResourceName
	for _, name := range Names(hard) {
		if _, ok := used[name]; want.Has(name) && !ok {
			out = append(out, name)
		}
	}
	return out
}
