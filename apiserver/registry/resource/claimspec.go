package resource

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// What a claim asks for, with Kubernetes' defaults and validation: the
// spec of a ResourceClaim, and of the claims a ResourceClaimTemplate
// makes. Left out of the validation: derived attributes and capacity
// requests (alpha and beta refinements of a request).

// defaultClaimSpec is Kubernetes' SetDefaults_ExactDeviceRequest and
// SetDefaults_DeviceSubRequest: a request for "a device" is for exactly
// one; a toleration without an operator compares the value.
func defaultClaimSpec(spec *resourcev1.ResourceClaimSpec) {
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if e := r.Exactly; e != nil {
			defaultCount(&e.AllocationMode, &e.Count)
			defaultTolerations(e.Tolerations)
		}
		for j := range r.FirstAvailable {
			sub := &r.FirstAvailable[j]
			defaultCount(&sub.AllocationMode, &sub.Count)
			defaultTolerations(sub.Tolerations)
		}
	}
}

func defaultCount(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

func defaultTolerations(ts []resourcev1.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

// requestNames are a claim's requests, each with its subrequests (nil
// for a request of exactly one kind of device): what constraints,
// configuration and allocation results refer to, as "req" or "req/sub".
type requestNames map[string]sets.Set[string]

func requestNamesOf(claim *resourcev1.DeviceClaim) requestNames {
	names := requestNames{}
	for _, r := range claim.Requests {
		var subs sets.Set[string]
		for _, sub := range r.FirstAvailable {
			if subs == nil {
				subs = sets.New[string]()
			}
			subs.Insert(sub.Name)
		}
		names[r.Name] = subs
	}
	return names
}

func (n requestNames) has(ref string) bool {
	req, sub, isSub := strings.Cut(ref, "/")
	subs, ok := n[req]
	if !ok || !isSub {
		return ok
	}
	return subs.Has(sub)
}

const requestRefRule = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

func validateRequestRef(ref string, names requestNames, path *field.Path) field.ErrorList {
	parts := strings.Split(ref, "/")
	if len(parts) > 2 {
		return field.ErrorList{field.Invalid(path, ref, requestRefRule)}
	}
	var errs field.ErrorList
	for _, part := range parts {
		errs = append(errs, validateDNSLabel(part, path)...)
	}
	if !names.has(ref) {
		errs = append(errs, field.Invalid(path, ref, requestRefRule))
	}
	return errs
}

// validateRequestRefs is a list of references, unique, at most as many
// as a claim may have requests.
func validateRequestRefs(refs []string, names requestNames, path *field.Path) field.ErrorList {
	return validateSet(refs, resourcev1.DeviceRequestsMaxSize, func(ref string) string { return ref },
		func(ref string, p *field.Path) field.ErrorList { return validateRequestRef(ref, names, p) }, path)
}

// validateClaimSpec is Kubernetes' validateResourceClaimSpec.
func validateClaimSpec(spec *resourcev1.ResourceClaimSpec, path *field.Path) field.ErrorList {
	devices := path.Child("devices")
	claim := &spec.Devices
	names := requestNamesOf(claim)
	errs := validateSet(claim.Requests, resourcev1.DeviceRequestsMaxSize, func(r resourcev1.DeviceRequest) string { return r.Name },
		validateRequest, devices.Child("requests"))
	errs = append(errs, validateList(claim.Constraints, resourcev1.DeviceConstraintsMaxSize, func(c resourcev1.DeviceConstraint, p *field.Path) field.ErrorList {
		errs := validateRequestRefs(c.Requests, names, p.Child("requests"))
		switch {
		case c.MatchAttribute != nil && c.DistinctAttribute != nil:
			return append(errs, field.Invalid(p, nil, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
		case c.MatchAttribute != nil:
			return append(errs, validateFullyQualifiedName(string(*c.MatchAttribute), p.Child("matchAttribute"))...)
		case c.DistinctAttribute != nil:
			return append(errs, validateFullyQualifiedName(string(*c.DistinctAttribute), p.Child("distinctAttribute"))...)
		}
		return append(errs, field.Required(p, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	}, devices.Child("constraints"))...)
	return append(errs, validateList(claim.Config, resourcev1.DeviceConfigMaxSize, func(c resourcev1.DeviceClaimConfiguration, p *field.Path) field.ErrorList {
		errs := validateRequestRefs(c.Requests, names, p.Child("requests"))
		return append(errs, validateDeviceConfiguration(c.DeviceConfiguration, p)...)
	}, devices.Child("config"))...)
}

// validateRequest: a request asks for exactly one kind of device, or for
// the first of a list of alternatives (firstAvailable) it can get.
func validateRequest(r resourcev1.DeviceRequest, path *field.Path) field.ErrorList {
	errs := validateDNSLabel(r.Name, path.Child("name"))
	switch {
	case r.Exactly == nil && len(r.FirstAvailable) == 0:
		return append(errs, field.Required(path, "exactly one of `exactly` or `firstAvailable` is required"))
	case r.Exactly != nil && len(r.FirstAvailable) > 0:
		return append(errs, field.Invalid(path, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case r.Exactly != nil:
		e := r.Exactly
		return append(errs, validateDeviceChoice(e.DeviceClassName, e.Selectors, e.AllocationMode, e.Count, e.Tolerations, path.Child("exactly"))...)
	}
	return append(errs, validateSet(r.FirstAvailable, resourcev1.FirstAvailableDeviceRequestMaxSize,
		func(sub resourcev1.DeviceSubRequest) string { return sub.Name },
		func(sub resourcev1.DeviceSubRequest, p *field.Path) field.ErrorList {
			errs := validateDNSLabel(sub.Name, p.Child("name"))
			return append(errs, validateDeviceChoice(sub.DeviceClassName, sub.Selectors, sub.AllocationMode, sub.Count, sub.Tolerations, p)...)
		}, path.Child("firstAvailable"))...)
}

// validateDeviceChoice is what a request asks for, exactly or as one of
// its alternatives: devices of a class, the selectors they match, how
// many, and the taints they may have.
func validateDeviceChoice(class string, selectors []resourcev1.DeviceSelector, mode resourcev1.DeviceAllocationMode, count int64,
	tolerations []resourcev1.DeviceToleration, path *field.Path) field.ErrorList {
	errs := validateDeviceClassName(class, path.Child("deviceClassName"))
	errs = append(errs, validateSelectors(selectors, path.Child("selectors"))...)
	errs = append(errs, validateAllocationMode(mode, count, path)...)
	return append(errs, validateTolerations(tolerations, path.Child("tolerations"))...)
}

var allocationModes = []resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount}

func validateAllocationMode(mode resourcev1.DeviceAllocationMode, count int64, path *field.Path) field.ErrorList {
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			return field.ErrorList{field.Invalid(path.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode))}
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			return field.ErrorList{field.Invalid(path.Child("count"), count, "must be greater than zero")}
		}
	default:
		return field.ErrorList{field.NotSupported(path.Child("allocationMode"), mode, allocationModes)}
	}
	return nil
}

// validateSelectors: each selector is a CEL expression over a device
// (device.driver, device.attributes, device.capacity), compiled here as
// kube-apiserver compiles it, so a typo is refused on write rather than
// matching nothing at scheduling.
func validateSelectors(selectors []resourcev1.DeviceSelector, path *field.Path) field.ErrorList {
	return validateList(selectors, resourcev1.DeviceSelectorsMaxSize, func(s resourcev1.DeviceSelector, p *field.Path) field.ErrorList {
		if s.CEL == nil {
			return field.ErrorList{field.Required(p.Child("cel"), "")}
		}
		if err := compileSelector(s.CEL.Expression, p.Child("cel", "expression")); err != nil {
			return field.ErrorList{err}
		}
		return nil
	}, path)
}

// newExpressions is the CEL environment of expressions written now (not
// ones already stored, which a newer server must keep accepting).
var newExpressions = environment.NewExpressions

func compileSelector(expr string, path *field.Path) *field.Error {
	if len(expr) > resourcev1.CELSelectorExpressionMaxLength {
		return field.TooLong(path, "", resourcev1.CELSelectorExpressionMaxLength)
	}
	// DRAConsumableCapacity is beta and on in Kubernetes v1.37;
	// DRAListTypeAttributes is alpha and off.
	result := dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true}).
		CompileCELExpression(expr, dracel.Options{EnvType: &newExpressions})
	if result.Error != nil {
		var celErr *apiservercel.Error
		if errors.As(result.Error, &celErr) {
			switch celErr.Type {
			case apiservercel.ErrorTypeRequired:
				return field.Required(path, celErr.Detail)
			case apiservercel.ErrorTypeInvalid:
				return field.Invalid(path, expr, celErr.Detail)
			}
		}
		return field.InternalError(path, result.Error)
	}
	if result.MaxCost > resourcev1.CELSelectorExpressionMaxCost {
		return field.Forbidden(path, "too complex, exceeds cost limit")
	}
	return nil
}

var (
	tolerationOperators = []resourcev1.DeviceTolerationOperator{resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists}
	taintEffects        = sets.New(resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone)
)

// validateTolerations is Kubernetes' validateDeviceToleration for each:
// as a pod's tolerations of node taints, for devices' taints.
func validateTolerations(ts []resourcev1.DeviceToleration, path *field.Path) field.ErrorList {
	return validateList(ts, resourcev1.DeviceTolerationsMaxLength, validateToleration, path)
}

func validateToleration(t resourcev1.DeviceToleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, path.Child("key"))...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		errs = append(errs, validateLabelValue(t.Value, path.Child("value"))...)
	case "":
		errs = append(errs, field.Required(path.Child("operator"), ""))
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, tolerationOperators))
	}
	if t.Effect != "" && !taintEffects.Has(t.Effect) {
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, sets.List(taintEffects)))
	}
	return errs
}

// validateDeviceConfiguration: configuration is opaque to Kubernetes,
// JSON for the driver it names, at most 10 KiB.
func validateDeviceConfiguration(c resourcev1.DeviceConfiguration, path *field.Path) field.ErrorList {
	if c.Opaque == nil {
		return field.ErrorList{field.Required(path.Child("opaque"), "")}
	}
	p := path.Child("opaque")
	errs := validateDriverName(c.Opaque.Driver, p.Child("driver"))
	return append(errs, validateParameters(c.Opaque.Parameters.Raw, p.Child("parameters"))...)
}

// validateParameters is Kubernetes' validateRawExtension: a JSON object.
func validateParameters(raw []byte, path *field.Path) field.ErrorList {
	if len(raw) == 0 {
		return field.ErrorList{field.Required(path, "")}
	}
	if len(raw) > resourcev1.OpaqueParametersMaxLength {
		return field.ErrorList{field.TooLong(path, "", resourcev1.OpaqueParametersMaxLength)}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return field.ErrorList{field.Invalid(path, "<value omitted>", fmt.Sprintf("error parsing data as JSON: %v", err))}
	}
	switch v.(type) {
	case nil:
		return field.ErrorList{field.Required(path, "")}
	case map[string]any:
		return nil
	}
	return field.ErrorList{field.Invalid(path, "<value omitted>", "must be a valid JSON object")}
}
