package resource

import (
	"fmt"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// ResourceSlices are a driver's devices: its kubelet plugin publishes
// one or more slices per pool (the devices of one node, usually), and a
// new pool.generation when the pool changes, so that the scheduler uses
// only a complete, current pool. Drivers list and watch their own by
// spec.driver, kubelets theirs by spec.nodeName.
var ResourceSlices = &apiserver.Resource{
	GroupVersion: resourcev1.SchemeGroupVersion, Name: "resourceslices", Kind: "ResourceSlice",
	New:     func() runtime.Object { return &resourcev1.ResourceSlice{} },
	NewList: func() runtime.Object { return &resourcev1.ResourceSliceList{} },
	Default: func(obj runtime.Object) {
		s := obj.(*resourcev1.ResourceSlice)
		for i := range s.Spec.Devices {
			for j := range s.Spec.Devices[i].Taints {
				defaultTimeAdded(&s.Spec.Devices[i].Taints[j])
			}
		}
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		var prev *resourcev1.ResourceSliceSpec
		if old != nil {
			prev = &old.(*resourcev1.ResourceSlice).Spec
		}
		return validateSliceSpec(&obj.(*resourcev1.ResourceSlice).Spec, prev, field.NewPath("spec"))
	},
	Fields: func(obj runtime.Object) fields.Set {
		s := obj.(*resourcev1.ResourceSlice)
		return fields.Set{"spec.nodeName": ptr.Deref(s.Spec.NodeName, ""), "spec.driver": s.Spec.Driver}
	},
	// kube-apiserver's ResourceSlice printer.
	Columns: []apiserver.Column{{Name: "Node", Type: "string"}, {Name: "Driver", Type: "string"},
		{Name: "Pool", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		s := obj.(*resourcev1.ResourceSlice)
		return []any{ptr.Deref(s.Spec.NodeName, ""), s.Spec.Driver, s.Spec.Pool.Name, apiserver.Age(s.CreationTimestamp, now)}
	},
}

const nodeSelectionRule = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"

// validateSliceSpec is Kubernetes' validateResourceSliceSpec, without
// the alpha features (partitionable devices' partition types, node
// allocatable resources, capacity request policies are not checked).
func validateSliceSpec(spec, old *resourcev1.ResourceSliceSpec, path *field.Path) field.ErrorList {
	errs := validateDriverName(spec.Driver, path.Child("driver"))
	pool := path.Child("pool")
	errs = append(errs, validatePoolName(spec.Pool.Name, pool.Child("name"))...)
	if spec.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(pool.Child("resourceSliceCount"), spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if spec.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(pool.Child("generation"), spec.Pool.Generation, "must be greater than or equal to zero"))
	}
	if old != nil {
		// Another pool, driver or node is another slice.
		errs = append(errs, apivalidation.ValidateImmutableField(spec.Pool.Name, old.Pool.Name, pool.Child("name"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(spec.Driver, old.Driver, path.Child("driver"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(spec.NodeName, old.NodeName, path.Child("nodeName"))...)
	}

	var set []string
	if spec.NodeName != nil {
		if *spec.NodeName == "" {
			errs = append(errs, field.Invalid(path.Child("nodeName"), "", "must be either unset or set to a non-empty string"))
		} else {
			set = append(set, "`nodeName`")
			errs = append(errs, validateNodeName(*spec.NodeName, path.Child("nodeName"))...)
		}
	}
	if spec.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, core.ValidateNodeSelector(spec.NodeSelector, path.Child("nodeSelector"))...)
		if terms := spec.NodeSelector.NodeSelectorTerms; len(terms) != 1 {
			// So that the selectors of devices from several slices merge.
			errs = append(errs, field.Invalid(path.Child("nodeSelector", "nodeSelectorTerms"), terms, "must have exactly one node selector term"))
		}
	}
	errs = append(errs, validateTrueOrUnset(spec.AllNodes, "`allNodes`", path.Child("allNodes"), &set)...)
	errs = append(errs, validateTrueOrUnset(spec.PerDeviceNodeSelection, "`perDeviceNodeSelection`", path.Child("perDeviceNodeSelection"), &set)...)
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(path, nodeSelectionRule))
	case 1:
	default:
		errs = append(errs, field.Invalid(path, fmt.Sprintf("{%s}", strings.Join(set, ", ")), nodeSelectionRule+", but multiple fields are set"))
	}

	if spec.SharedCounters != nil && spec.Devices != nil {
		errs = append(errs, field.Invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	errs = append(errs, validateCounterSets(spec.SharedCounters, path.Child("sharedCounters"))...)

	devices := path.Child("devices")
	max := resourcev1.ResourceSliceMaxDevices
	if usesAdvancedFeatures(spec) {
		max = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
	}
	perDevice := ptr.Deref(spec.PerDeviceNodeSelection, false)
	return append(errs, validateSet(spec.Devices, max, func(d resourcev1.Device) string { return d.Name },
		func(d resourcev1.Device, p *field.Path) field.ErrorList { return validateDevice(d, perDevice, p) }, devices)...)
}

// validateTrueOrUnset: a boolean that only means something when true.
func validateTrueOrUnset(b *bool, name string, path *field.Path, set *[]string) field.ErrorList {
	switch {
	case b == nil:
		return nil
	case *b:
		*set = append(*set, name)
		return nil
	}
	return field.ErrorList{field.Invalid(path, false, "must be either unset or set to true")}
}

// usesAdvancedFeatures: devices with taints or counters (or list
// attributes) are bigger to store, so a slice holds fewer of them.
func usesAdvancedFeatures(spec *resourcev1.ResourceSliceSpec) bool {
	for _, d := range spec.Devices {
		if len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 {
			return true
		}
	}
	return false
}

func validateCounterSets(counterSets []resourcev1.CounterSet, path *field.Path) field.ErrorList {
	return validateSet(counterSets, resourcev1.ResourceSliceMaxCounterSets, func(cs resourcev1.CounterSet) string { return cs.Name },
		func(cs resourcev1.CounterSet, p *field.Path) field.ErrorList {
			return validateCounterRef(cs.Name, cs.Counters, resourcev1.ResourceSliceMaxCountersPerCounterSet, p)
		}, path)
}

// validateCounterRef: a set of counters (or a device's consumption of one
// set), by DNS-label names.
func validateCounterRef[T any](set string, counters map[string]T, max int, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if set == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		errs = append(errs, validateDNSLabel(set, path.Child("name"))...)
	}
	p := path.Child("counters")
	switch {
	case len(counters) == 0:
		errs = append(errs, field.Required(p, ""))
	case len(counters) > max:
		errs = append(errs, field.TooMany(p, len(counters), max))
	}
	for name := range counters {
		errs = append(errs, validateDNSLabel(name, p.Key(name))...)
	}
	return errs
}

const perDeviceRule = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"

// validateDevice is Kubernetes' validateDevice: its name, at most 32
// attributes and capacities (by qualified names), its taints, the
// counters it consumes, and where it is when each device says so.
func validateDevice(d resourcev1.Device, perDevice bool, path *field.Path) field.ErrorList {
	errs := validateDNSLabel(d.Name, path.Child("name"))
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		errs = append(errs, field.Invalid(path, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d",
			resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)))
	}
	for name, a := range d.Attributes {
		p := path.Child("attributes").Key(string(name))
		errs = append(errs, validateQualifiedName(string(name), p)...)
		errs = append(errs, validateAttribute(a, p)...)
	}
	for name, c := range d.Capacity {
		p := path.Child("capacity").Key(string(name))
		errs = append(errs, validateQualifiedName(string(name), p)...)
		if c.RequestPolicy != nil && !ptr.Deref(d.AllowMultipleAllocations, false) {
			errs = append(errs, field.Forbidden(p.Child("requestPolicy"), "allowMultipleAllocations must be true"))
		}
	}
	errs = append(errs, validateList(d.Taints, resourcev1.DeviceTaintsMaxLength, func(t resourcev1.DeviceTaint, p *field.Path) field.ErrorList {
		return validateDeviceTaint(t, nil, p)
	}, path.Child("taints"))...)
	errs = append(errs, validateList(d.ConsumesCounters, resourcev1.ResourceSliceMaxDeviceCounterConsumptionsPerDevice,
		func(c resourcev1.DeviceCounterConsumption, p *field.Path) field.ErrorList {
			return validateCounterRef(c.CounterSet, c.Counters, resourcev1.ResourceSliceMaxCountersPerDeviceCounterConsumption, p)
		}, path.Child("consumesCounters"))...)

	if !perDevice {
		if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
			errs = append(errs, field.Invalid(path, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"))
		}
	} else {
		var set []string
		if d.NodeName != nil {
			if *d.NodeName == "" {
				errs = append(errs, field.Invalid(path.Child("nodeName"), "", "must not be empty"))
			} else {
				set = append(set, "`nodeName`")
				errs = append(errs, validateNodeName(*d.NodeName, path.Child("nodeName"))...)
			}
		}
		if d.NodeSelector != nil {
			set = append(set, "`nodeSelector`")
			errs = append(errs, core.ValidateNodeSelector(d.NodeSelector, path.Child("nodeSelector"))...)
		}
		errs = append(errs, validateTrueOrUnset(d.AllNodes, "`allNodes`", path.Child("allNodes"), &set)...)
		switch len(set) {
		case 0:
			errs = append(errs, field.Required(path, perDeviceRule))
		case 1:
		default:
			errs = append(errs, field.Invalid(path, fmt.Sprintf("{%s}", strings.Join(set, ", ")), perDeviceRule))
		}
	}
	return append(errs, validateBindingConditions(d.BindingConditions, d.BindingFailureConditions, path)...)
}

// validateAttribute: exactly one value, strings and versions of at most
// 64 characters, versions as semver.org 2.0.0 has them.
func validateAttribute(a resourcev1.DeviceAttribute, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	values := 0
	for _, isSet := range []bool{a.BoolValue != nil, a.IntValue != nil, a.StringValue != nil, a.VersionValue != nil} {
		if isSet {
			values++
		}
	}
	if s := a.StringValue; s != nil && len(*s) > resourcev1.DeviceAttributeMaxValueLength {
		errs = append(errs, field.TooLong(path.Child("string"), "", resourcev1.DeviceAttributeMaxValueLength))
	}
	if v := a.VersionValue; v != nil {
		p := path.Child("version")
		if _, err := semver.Parse(*v); err != nil {
			errs = append(errs, field.Invalid(p, *v, "must be a string compatible with semver.org spec 2.0.0"))
		}
		if len(*v) > resourcev1.DeviceAttributeMaxValueLength {
			errs = append(errs, field.TooLong(p, "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	switch values {
	case 0:
		errs = append(errs, field.Invalid(path, "", "exactly one value must be specified"))
	case 1:
	default:
		errs = append(errs, field.Invalid(path, a, "exactly one value must be specified"))
	}
	return errs
}

// validateBindingConditions: the conditions a device's driver sets once
// the device is ready to bind (or has failed), each a label-like name,
// at most four, both lists or neither, and no condition in both.
func validateBindingConditions(ready, failed []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(conds []string, p *field.Path, other sets.Set[string]) {
		if len(conds) > resourcev1.BindingConditionsMaxSize {
			errs = append(errs, field.TooMany(p, len(conds), resourcev1.BindingConditionsMaxSize))
		}
		seen := sets.New[string]()
		for i, c := range conds {
			errs = append(errs, metav1validation.ValidateLabelName(c, p.Index(i))...)
			if seen.Has(c) {
				errs = append(errs, field.Duplicate(p.Index(i), c))
			}
			seen.Insert(c)
			if other.Has(c) {
				errs = append(errs, field.Invalid(p.Index(i), c, "bindingFailureConditions must not overlap with bindingConditions"))
			}
		}
	}
	check(ready, path.Child("bindingConditions"), nil)
	check(failed, path.Child("bindingFailureConditions"), sets.New(ready...))
	if len(ready) == 0 && len(failed) > 0 {
		errs = append(errs, field.Invalid(path.Child("bindingConditions"), ready, "bindingConditions are required to use bindingFailureConditions"))
	}
	if len(failed) == 0 && len(ready) > 0 {
		errs = append(errs, field.Invalid(path.Child("bindingFailureConditions"), failed, "bindingFailureConditions are required to use bindingConditions"))
	}
	return errs
}
