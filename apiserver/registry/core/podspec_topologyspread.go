package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	spreadActions         = sets.New(corev1.DoNotSchedule, corev1.ScheduleAnyway)
	nodeInclusionPolicies = sets.New(corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor)
)

// validateTopologySpreadConstraints is Kubernetes' rule for
// spec.topologySpreadConstraints, which the scheduler's PodTopologySpread
// reads: a positive maxSkew, a topologyKey, a known whenUnsatisfiable,
// each {topologyKey, whenUnsatisfiable} once, minDomains only positive and
// only with DoNotSchedule, known node inclusion policies, matchLabelKeys
// that are label names apart from the selector's keys, and a valid
// labelSelector.
func validateTopologySpreadConstraints(cs []corev1.TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		p := path.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), int64(c.MaxSkew), "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		if !spreadActions.Has(c.WhenUnsatisfiable) {
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, sets.List(spreadActions)))
		}
		for _, later := range cs[i+1:] {
			if later.TopologyKey == c.TopologyKey && later.WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if m := c.MinDomains; m != nil {
			if *m <= 0 {
				errs = append(errs, field.Invalid(p.Child("minDomains"), int64(*m), "must be greater than zero"))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(p.Child("minDomains"), m,
					fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		errs = append(errs, validateNodeInclusionPolicy(c.NodeAffinityPolicy, p.Child("nodeAffinityPolicy"))...)
		errs = append(errs, validateNodeInclusionPolicy(c.NodeTaintsPolicy, p.Child("nodeTaintsPolicy"))...)
		errs = append(errs, validateMatchLabelKeys(c.MatchLabelKeys, c.LabelSelector, p.Child("matchLabelKeys"))...)
		errs = append(errs, metavalidation.ValidateLabelSelector(c.LabelSelector, metavalidation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	return errs
}

func validateNodeInclusionPolicy(policy *corev1.NodeInclusionPolicy, path *field.Path) field.ErrorList {
	if policy == nil || nodeInclusionPolicies.Has(*policy) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, *policy, sets.List(nodeInclusionPolicies))}
}

// validateMatchLabelKeys: label names, only beside a labelSelector, none
// of the selector's own keys (ValidateMatchLabelKeysInTopologySpread).
func validateMatchLabelKeys(keys []string, sel *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	var errs field.ErrorList
	selectorKeys := sets.New[string]()
	if sel == nil {
		errs = append(errs, field.Forbidden(path, "must not be specified when labelSelector is not set"))
	} else {
		for k := range sel.MatchLabels {
			selectorKeys.Insert(k)
		}
		for _, e := range sel.MatchExpressions {
			selectorKeys.Insert(e.Key)
		}
	}
	for i, k := range keys {
		errs = append(errs, metavalidation.ValidateLabelName(k, path.Index(i))...)
		if selectorKeys.Has(k) {
			errs = append(errs, field.Invalid(path.Index(i), k, "exists in both matchLabelKeys and labelSelector"))
		}
	}
	return errs
}
