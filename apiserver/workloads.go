package apiserver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateWorkload checks what ReplicaSets and Deployments share: replicas,
// a selector that matches the template, an immutable selector (apps/v1), and
// a pod template that is a valid, always-restarting pod.
// oldSel is nil on create.
func validateWorkload(replicas *int32, sel, oldSel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateReplicas(replicas, spec.Child("replicas"))
	errs = append(errs, validateSelector(sel, tmpl.Labels, spec)...)
	if oldSel != nil && !equality.Semantic.DeepEqual(oldSel, sel) {
		errs = append(errs, field.Invalid(spec.Child("selector"), sel, "field is immutable"))
	}
	errs = append(errs, validatePodSpec(&tmpl.Spec, spec.Child("template", "spec"))...)
	if tmpl.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(spec.Child("template", "spec", "restartPolicy"), tmpl.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	return errs
}

// validateDeploymentStrategy checks a Deployment's strategy and deadline
// as Kubernetes does (ValidateDeploymentSpec), in its words.
func validateDeploymentStrategy(spec *appsv1.DeploymentSpec) field.ErrorList {
	path := field.NewPath("spec", "strategy")
	var errs field.ErrorList
	switch s := spec.Strategy; s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(path.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			errs = append(errs, field.Required(path.Child("rollingUpdate"), "this should be defaulted and never be nil"))
			break
		}
		ru := path.Child("rollingUpdate")
		unavailable, errU := intOrPercent(s.RollingUpdate.MaxUnavailable, ru.Child("maxUnavailable"), true)
		surge, errS := intOrPercent(s.RollingUpdate.MaxSurge, ru.Child("maxSurge"), false) // a surge may exceed 100%
		errs = append(append(errs, errU...), errS...)
		if len(errU)+len(errS) == 0 && unavailable == 0 && surge == 0 {
			errs = append(errs, field.Invalid(ru.Child("maxUnavailable"), s.RollingUpdate.MaxUnavailable.String(), "may not be 0 when `maxSurge` is 0"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), s.Type,
			[]string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)}))
	}
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), field.NewPath("spec", "minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, nonNegative(int64(*spec.RevisionHistoryLimit), field.NewPath("spec", "revisionHistoryLimit"))...)
	}
	if spec.ProgressDeadlineSeconds != nil {
		errs = append(errs, nonNegative(int64(*spec.ProgressDeadlineSeconds), field.NewPath("spec", "progressDeadlineSeconds"))...)
	}
	if spec.ProgressDeadlineSeconds != nil && *spec.ProgressDeadlineSeconds <= spec.MinReadySeconds {
		errs = append(errs, field.Invalid(field.NewPath("spec", "progressDeadlineSeconds"), *spec.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
	}
	return errs
}

var percentPattern = regexp.MustCompile(`^[0-9]+%$`)

func nonNegative(v int64, path *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(path, v, "must be greater than or equal to 0")}
	}
	return nil
}

// intOrPercent checks a maxSurge or maxUnavailable: a non-negative integer
// or a percentage (at most 100% if capped). It returns the number, or the
// percentage.
func intOrPercent(v *intstr.IntOrString, path *field.Path, capped bool) (int, field.ErrorList) {
	if v == nil {
		return 0, nil
	}
	if v.Type == intstr.String {
		if !percentPattern.MatchString(v.StrVal) {
			return 0, field.ErrorList{field.Invalid(path, v.StrVal, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")}
		}
		pct, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
		if capped && pct > 100 {
			return 0, field.ErrorList{field.Invalid(path, v.StrVal, "must not be greater than 100%")}
		}
		return pct, nil
	}
	return int(v.IntVal), nonNegative(int64(v.IntVal), path)
}

func int32String(i int32) string { return fmt.Sprint(i) }
