package core

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateLimitRange is Kubernetes' ValidateLimitRange (the same on
// create and update): one item per type, known resource names, and, per
// resource of an item, the order an admin means:
//
//	min <= defaultRequest <= default <= max,  1 <= maxLimitRequestRatio <= max/min
//
// A LimitRange of min 100m, max 500m, default 600m is refused with
// "spec.limits[0].default[cpu]: Invalid value: "500m": default value 600m
// is greater than max value 500m" (Kubernetes shows the max as the value).
func validateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.LimitType]()
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		path := field.NewPath("spec", "limits").Index(i)
		errs = append(errs, validateLimitType(item.Type, path.Child("type"))...)
		if seen.Has(item.Type) {
			errs = append(errs, field.Duplicate(path.Child("type"), item.Type))
		}
		seen.Insert(item.Type)

		lists := []namedList{{"max", item.Max}, {"min", item.Min}}
		if item.Type == corev1.LimitTypePod {
			// A pod has no limit of its own to default: only containers do.
			if len(item.Default) > 0 {
				errs = append(errs, field.Forbidden(path.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(item.DefaultRequest) > 0 {
				errs = append(errs, field.Forbidden(path.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		} else {
			lists = append(lists, namedList{"default", item.Default}, namedList{"defaultRequest", item.DefaultRequest})
		}
		lists = append(lists, namedList{"maxLimitRequestRatio", item.MaxLimitRequestRatio})
		names := sets.New[corev1.ResourceName]()
		for _, l := range lists {
			for _, name := range sortedNames(l.list) {
				errs = append(errs, validateLimitResourceName(item.Type, name, path.Child(l.name).Key(string(name)))...)
				names.Insert(name)
			}
		}
		if item.Type == corev1.LimitTypePersistentVolumeClaim {
			_, hasMin := item.Min[corev1.ResourceStorage]
			_, hasMax := item.Max[corev1.ResourceStorage]
			if !hasMin && !hasMax { // Kubernetes' path says "limits" twice
				errs = append(errs, field.Required(path.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		for _, name := range sets.List(names) {
			errs = append(errs, validateLimitOrder(item, name, path)...)
		}
	}
	return errs
}

// namedList is one of an item's resource lists, by its field name.
type namedList struct {
	name string
	list corev1.ResourceList
}

// validateLimitOrder checks one resource of one item against the order
// above, with Kubernetes' messages.
func validateLimitOrder(item *corev1.LimitRangeItem, name corev1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	key := string(name)
	min, hasMin := item.Min[name]
	max, hasMax := item.Max[name]
	// A Pod item's defaults are refused above, and not compared.
	def, hasDef := item.Default[name]
	req, hasReq := item.DefaultRequest[name]
	if item.Type == corev1.LimitTypePod {
		hasDef, hasReq = false, false
	}
	ratio, hasRatio := item.MaxLimitRequestRatio[name]
	invalid := func(list string, value resource.Quantity, format string, args ...any) {
		errs = append(errs, field.Invalid(path.Child(list).Key(key), value, fmt.Sprintf(format, args...)))
	}
	if hasMin && hasMax && min.Cmp(max) > 0 {
		invalid("min", min, "min value %s is greater than max value %s", min.String(), max.String())
	}
	if hasReq && hasMin && min.Cmp(req) > 0 {
		invalid("defaultRequest", req, "min value %s is greater than default request value %s", min.String(), req.String())
	}
	if hasReq && hasMax && req.Cmp(max) > 0 {
		invalid("defaultRequest", req, "default request value %s is greater than max value %s", req.String(), max.String())
	}
	if hasReq && hasDef && req.Cmp(def) > 0 {
		invalid("defaultRequest", req, "default request value %s is greater than default limit value %s", req.String(), def.String())
	}
	if hasDef && hasMin && min.Cmp(def) > 0 {
		invalid("default", min, "min value %s is greater than default value %s", min.String(), def.String())
	}
	if hasDef && hasMax && def.Cmp(max) > 0 {
		invalid("default", max, "default value %s is greater than max value %s", def.String(), max.String())
	}
	if hasRatio && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		invalid("maxLimitRequestRatio", ratio, "ratio %s is less than 1", ratio.String())
	}
	if hasRatio && hasMin && hasMax {
		// A container at min could not reach max within the ratio:
		// compare in milli-units when they fit, in units otherwise.
		r, lo, hi := float64(ratio.Value()), min.Value(), max.Value()
		if ratio.Value() < resource.MaxMilliValue && lo < resource.MaxMilliValue && hi < resource.MaxMilliValue {
			r, lo, hi = float64(ratio.MilliValue())/1000, min.MilliValue(), max.MilliValue()
		}
		if bound := float64(hi) / float64(lo); r > bound {
			invalid("maxLimitRequestRatio", ratio, "ratio %s is greater than max/min = %f", ratio.String(), bound)
		}
	}
	// GPUs, hugepages and other resources that cannot be overcommitted:
	// a container's request is its limit, so the defaults must agree.
	if !isOvercommitAllowed(name) && hasDef && hasReq && def.Cmp(req) != 0 {
		invalid("defaultRequest", req, "default value %s must equal to defaultRequest value %s in %s", def.String(), req.String(), key)
	}
	return errs
}

func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		out = append(out, name)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

var standardLimitTypes = sets.New(corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim)

// validateLimitType: Pod, Container, PersistentVolumeClaim, or a type
// qualified by a domain (example.com/thing) that some other admission
// plugin would act on.
func validateLimitType(t corev1.LimitType, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		errs = append(errs, field.Invalid(path, t, msg))
	}
	if len(errs) == 0 && !strings.Contains(string(t), "/") && !standardLimitTypes.Has(t) {
		errs = append(errs, field.Invalid(path, t, "must be a standard limit type or fully qualified"))
	}
	return errs
}

// validateLimitResourceName: pods and containers are limited in what a
// container can request (cpu, memory, ephemeral-storage, hugepages-*,
// extended resources); other types in any resource Kubernetes knows.
// As in Kubernetes, a container's bad name can earn both messages.
func validateLimitResourceName(t corev1.LimitType, name corev1.ResourceName, path *field.Path) field.ErrorList {
	errs := validateResourceName(name, path)
	if t != corev1.LimitTypePod && t != corev1.LimitTypeContainer {
		return errs
	}
	if !strings.Contains(string(name), "/") {
		if !isStandardContainerResourceName(name) {
			errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(name) && !IsExtendedResourceName(name) {
		errs = append(errs, field.Invalid(path, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

// validateResourceName: a qualified name, and a standard one unless it
// has a domain.
func validateResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(errs) == 0 && !strings.Contains(string(name), "/") && !isStandardResourceName(name) {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource type or fully qualified"))
	}
	return errs
}

// The resource names Kubernetes knows (pkg/apis/core/helper): the
// standard ones of quotas and limits, and those of containers.
var (
	standardResources = sets.New[corev1.ResourceName](
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceStorage, corev1.ResourceRequestsStorage,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)
	standardContainerResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)
)

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func isStandardResourceName(name corev1.ResourceName) bool {
	return standardResources.Has(name) || isHugePages(name) ||
		strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

func isStandardContainerResourceName(name corev1.ResourceName) bool {
	return standardContainerResources.Has(name) || isHugePages(name)
}

// isNativeResource: unprefixed names, and kubernetes.io/ ones, are Kubernetes' own.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// IsExtendedResourceName: a device plugin's (or a DeviceClass's) resource (example.com/gpu),
// whose quota name requests.<name> is still a qualified name.
func IsExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// isOvercommitAllowed: limits above requests make sense for Kubernetes'
// own resources except hugepages.
func isOvercommitAllowed(name corev1.ResourceName) bool {
	return isNativeResource(name) && !isHugePages(name)
}
