package node

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// containerResources are the resources a container (and so a pod's
// overhead) may name without a domain; hugepages-<size> are too.
var containerResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

// validateOverhead: Kubernetes checks podFixed as a container's limits
// (ValidateContainerResourceRequirements on {Limits: podFixed}), which is
// why its errors read overhead.limits[cpu]. Each name is a standard
// container resource or a domain-qualified one; each quantity is not
// negative, and a whole number for the resources counted in units.
func validateOverhead(o *nodev1.Overhead, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	limits := path.Child("limits")
	for name, q := range o.PodFixed {
		p := limits.Key(string(name))
		for _, msg := range validation.IsQualifiedName(string(name)) {
			errs = append(errs, field.Invalid(p, name, msg))
		}
		if !strings.Contains(string(name), "/") && !containerResources.Has(name) &&
			!strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			errs = append(errs, field.Invalid(p, name, "must be a standard resource for containers"))
		}
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
		}
		if strings.Contains(string(name), "/") && q.MilliValue()%1000 != 0 {
			// Extended resources (example.com/gpu) come in units.
			errs = append(errs, field.Invalid(p, q, "must be an integer"))
		}
	}
	return errs
}

var taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// validateTolerations is Kubernetes' ValidateTolerations, as for a pod,
// plus RuntimeClass's own rule: no two tolerations alike (same key,
// operator, value and effect).
func validateTolerations(tolerations []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	type listKey struct {
		key, op, value, effect string
	}
	seen := map[listKey]bool{}
	for i, t := range tolerations {
		p := path.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		// An empty key with Exists matches every taint.
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "": // "" is Equal
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" && !sets.New(taintEffects...).Has(t.Effect) {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, taintEffects))
		}
		k := listKey{t.Key, string(t.Operator), t.Value, string(t.Effect)}
		if seen[k] {
			errs = append(errs, field.Duplicate(p, t))
		}
		seen[k] = true
	}
	return errs
}
