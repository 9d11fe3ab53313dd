package autoscaling

import (
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The longest scaling policy period and stabilization window Kubernetes
// accepts: half an hour and an hour.
const (
	maxPeriodSeconds              = 1800
	maxStabilizationWindowSeconds = 3600
)

// refOptions are how strictly a CrossVersionObjectReference's apiVersion
// is checked (Kubernetes' CrossVersionObjectReferenceValidationOptions).
type refOptions struct {
	allowEmptyGroup, allowInvalidAPIVersion bool
}

// ValidateHPA is Kubernetes' ValidateHorizontalPodAutoscaler (and its
// update, old non-nil) with the strategy's options of v1.37: minReplicas
// may be 0 (HPAScaleToZero is on by default), with an Object or External
// metric to wake the target; scaleTargetRef needs an API group, except
// for a ReplicationController, and an update that keeps its kind and
// apiVersion keeps an old, invalid one; an object metric may name a core
// kind.
func ValidateHPA(hpa, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	spec := hpa.Spec
	specPath := field.NewPath("spec")
	var errs field.ErrorList

	if spec.MinReplicas != nil && *spec.MinReplicas < 0 {
		errs = append(errs, field.Invalid(specPath.Child("minReplicas"), *spec.MinReplicas, "must be greater than or equal to 0"))
	}
	switch {
	case spec.MaxReplicas == 0:
		errs = append(errs, field.Required(specPath.Child("maxReplicas"), "must be set and greater than 0"))
	case spec.MaxReplicas < 0:
		errs = append(errs, field.Invalid(specPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to 1"))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, field.Invalid(specPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}

	target := refOptions{allowEmptyGroup: spec.ScaleTargetRef.Kind == "ReplicationController"}
	objects := refOptions{allowEmptyGroup: true}
	if old != nil {
		if o := old.Spec.ScaleTargetRef; o.APIVersion == spec.ScaleTargetRef.APIVersion && o.Kind == spec.ScaleTargetRef.Kind {
			target.allowInvalidAPIVersion = true
		}
		for _, m := range old.Spec.Metrics {
			if m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil && validateAPIVersion(m.Object.DescribedObject, objects) != nil {
				objects.allowInvalidAPIVersion = true
				break
			}
		}
	}
	errs = append(errs, validateReference(spec.ScaleTargetRef, specPath.Child("scaleTargetRef"), target)...)
	errs = append(errs, validateMetrics(spec.Metrics, specPath.Child("metrics"), spec.MinReplicas, objects)...)
	if b := spec.Behavior; b != nil {
		errs = append(errs, validateScalingRules(b.ScaleUp, specPath.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateScalingRules(b.ScaleDown, specPath.Child("behavior", "scaleDown"))...)
	}
	return errs
}

// ValidateHPAStatus is ValidateHorizontalPodAutoscalerStatusUpdate.
func ValidateHPAStatus(hpa *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	var errs field.ErrorList
	st := hpa.Status
	for i, c := range st.Conditions {
		if c.ObservedGeneration != nil && *c.ObservedGeneration < 0 {
			errs = append(errs, nonnegative(field.NewPath("status", "conditions").Index(i).Child("observedGeneration"), *c.ObservedGeneration))
		}
	}
	if st.CurrentReplicas < 0 {
		errs = append(errs, nonnegative(field.NewPath("status", "currentReplicas"), int64(st.CurrentReplicas)))
	}
	if st.DesiredReplicas < 0 {
		errs = append(errs, nonnegative(field.NewPath("status", "desiredReplicas"), int64(st.DesiredReplicas)))
	}
	return errs
}

func nonnegative(p *field.Path, v int64) *field.Error {
	return field.Invalid(p, v, "must be greater than or equal to 0")
}

func validateReference(ref autoscalingv2.CrossVersionObjectReference, p *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	if ref.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Kind) {
			errs = append(errs, field.Invalid(p.Child("kind"), ref.Kind, msg))
		}
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(ref.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	if err := validateAPIVersion(ref, opts); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return errs
}

func validateAPIVersion(ref autoscalingv2.CrossVersionObjectReference, opts refOptions) error {
	if opts.allowInvalidAPIVersion {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return err
	}
	if !opts.allowEmptyGroup && gv.Group == "" {
		return errors.New("apiVersion must specify API group")
	}
	return nil
}

func validateMetrics(metrics []autoscalingv2.MetricSpec, p *field.Path, minReplicas *int32, objects refOptions) field.ErrorList {
	var errs field.ErrorList
	wakes := false // an Object or External metric can scale up from zero pods
	for i, m := range metrics {
		errs = append(errs, validateMetricSpec(m, p.Index(i), objects)...)
		if m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType {
			wakes = true
		}
	}
	if minReplicas != nil && *minReplicas == 0 && !wakes {
		errs = append(errs, field.Forbidden(p, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

var metricSourceTypes = []string{"ContainerResource", "External", "Object", "Pods", "Resource"}

// validateMetricSpec: a metric names its type and fills that source,
// and that source alone.
func validateMetricSpec(m autoscalingv2.MetricSpec, p *field.Path, objects refOptions) field.ErrorList {
	var errs field.ErrorList
	if m.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	known := map[autoscalingv2.MetricSourceType]string{
		autoscalingv2.ObjectMetricSourceType: "object", autoscalingv2.PodsMetricSourceType: "pods",
		autoscalingv2.ResourceMetricSourceType: "resource", autoscalingv2.ExternalMetricSourceType: "external",
		autoscalingv2.ContainerResourceMetricSourceType: "containerResource",
	}
	if _, ok := known[m.Type]; !ok {
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricSourceTypes))
	}

	// Only the first source present is validated, in Kubernetes' order.
	var present []string
	if m.Object != nil {
		if present = append(present, "object"); len(present) == 1 {
			errs = append(errs, validateObjectSource(m.Object, p.Child("object"), objects)...)
		}
	}
	if m.External != nil {
		if present = append(present, "external"); len(present) == 1 {
			errs = append(errs, validateExternalSource(m.External, p.Child("external"))...)
		}
	}
	if m.Pods != nil {
		if present = append(present, "pods"); len(present) == 1 {
			errs = append(errs, validatePodsSource(m.Pods, p.Child("pods"))...)
		}
	}
	if m.Resource != nil {
		if present = append(present, "resource"); len(present) == 1 {
			errs = append(errs, validateResourceSource(m.Resource.Name == "", m.Resource.Target, p.Child("resource"))...)
		}
	}
	if m.ContainerResource != nil {
		if present = append(present, "containerResource"); len(present) == 1 {
			errs = append(errs, validateContainerResourceSource(m.ContainerResource, p.Child("containerResource"))...)
		}
	}

	expected, ok := known[m.Type]
	if ok {
		filled := false
		for _, f := range present {
			filled = filled || f == expected
		}
		if !filled {
			errs = append(errs, field.Required(p.Child(expected), "must populate information for the given metric source"))
		}
	} else {
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricSourceTypes))
	}
	if len(present) != 1 {
		for _, f := range present {
			if f != expected {
				errs = append(errs, field.Forbidden(p.Child(f), "must populate the given metric source only"))
			}
		}
	}
	return errs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, p *field.Path, objects refOptions) field.ErrorList {
	errs := validateReference(src.DescribedObject, p.Child("describedObject"), objects)
	errs = append(errs, validateMetricIdentifier(src.Metric, p.Child("metric"))...)
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateResourceSource(noName bool, target autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if noName {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	errs = append(errs, validateMetricTarget(target, p.Child("target"))...)
	return append(errs, utilizationOrValue(target, p)...)
}

func validateContainerResourceSource(src *autoscalingv2.ContainerResourceMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, validateContainerResourceName(src.Name, p.Child("name"))...)
	}
	if src.Container == "" {
		errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
	} else {
		for _, msg := range utilvalidation.IsDNS1123Label(src.Container) {
			errs = append(errs, field.Invalid(p.Child("container"), src.Container, msg))
		}
	}
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	return append(errs, utilizationOrValue(src.Target, p)...)
}

// utilizationOrValue: a (container) resource metric targets a share of
// the requests or a raw amount, one of the two.
func utilizationOrValue(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	switch {
	case t.AverageUtilization == nil && t.AverageValue == nil:
		return field.ErrorList{field.Required(p.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization")}
	case t.AverageUtilization != nil && t.AverageValue != nil:
		return field.ErrorList{field.Forbidden(p.Child("target", "averageValue"), "may not set both a target raw value and a target utilization")}
	}
	return nil
}

func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	if t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.ValueMetricType && t.Type != autoscalingv2.AverageValueMetricType {
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range path.IsValidPathSegmentName(id.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), id.Name, msg))
	}
	return errs
}

var selectPolicies = []string{"Disabled", "Max", "Min"}
var policyTypes = []string{"Percent", "Pods"}

func validateScalingRules(rules *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if rules == nil {
		return nil
	}
	var errs field.ErrorList
	if w := rules.StabilizationWindowSeconds; w != nil && *w < 0 {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, "must be greater than or equal to zero"))
	}
	if w := rules.StabilizationWindowSeconds; w != nil && *w > maxStabilizationWindowSeconds {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, fmt.Sprintf("must be less than or equal to %v", maxStabilizationWindowSeconds)))
	}
	if s := rules.SelectPolicy; s != nil && *s != autoscalingv2.MaxChangePolicySelect && *s != autoscalingv2.MinChangePolicySelect && *s != autoscalingv2.DisabledPolicySelect {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), s, selectPolicies))
	}
	policies := p.Child("policies")
	if len(rules.Policies) == 0 {
		errs = append(errs, field.Required(policies, "must specify at least one Policy"))
	}
	for i, pol := range rules.Policies {
		ip := policies.Index(i)
		if pol.Type != autoscalingv2.PodsScalingPolicy && pol.Type != autoscalingv2.PercentScalingPolicy {
			errs = append(errs, field.NotSupported(ip.Child("type"), pol.Type, policyTypes))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero"))
		}
		if pol.PeriodSeconds > maxPeriodSeconds {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, fmt.Sprintf("must be less than or equal to %v", maxPeriodSeconds)))
		}
	}
	if t := rules.Tolerance; t != nil && t.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(p.Child("tolerance"), t.String(), "must be greater than or equal to 0"))
	}
	return errs
}
