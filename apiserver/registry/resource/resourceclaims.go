package resource

import (
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// ResourceClaims ask for devices. Their spec is fixed once created; the
// scheduler's DRA plugin (with the drivers' ResourceSlices) writes what
// it allocated in status.allocation and the pods that use the devices in
// status.reservedFor, through the status subresource.
var ResourceClaims = &apiserver.Resource{
	GroupVersion: resourcev1.SchemeGroupVersion, Name: "resourceclaims", Kind: "ResourceClaim", Namespaced: true,
	Subresources: []apiserver.Subresource{apiserver.WritesSubresource("status", updateClaimStatus)},
	New:          func() runtime.Object { return &resourcev1.ResourceClaim{} },
	NewList:      func() runtime.Object { return &resourcev1.ResourceClaimList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*resourcev1.ResourceClaim).Status = resourcev1.ResourceClaimStatus{}
	},
	Default: func(obj runtime.Object) {
		c := obj.(*resourcev1.ResourceClaim)
		defaultClaimSpec(&c.Spec)
		if a := c.Status.Allocation; a != nil {
			for i := range a.Devices.Results {
				defaultTolerations(a.Devices.Results[i].Tolerations)
			}
		}
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		c := obj.(*resourcev1.ResourceClaim)
		if old == nil {
			return validateClaimSpec(&c.Spec, field.NewPath("spec"))
		}
		// ValidateResourceClaimUpdate: only the immutability is checked,
		// the one error a client could act on.
		return apivalidation.ValidateImmutableField(c.Spec, old.(*resourcev1.ResourceClaim).Spec, field.NewPath("spec"))
	},
	// kube-apiserver's ResourceClaim printer.
	Columns: []apiserver.Column{{Name: "State", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		c := obj.(*resourcev1.ResourceClaim)
		return []any{claimState(c), apiserver.Age(c.CreationTimestamp, now)}
	},
}

// claimState is the printer's summary: pending until allocated, then
// allocated, and reserved while pods use it; deleted while it goes.
func claimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	case c.DeletionTimestamp == nil:
		states = append(states, "pending")
	}
	return strings.Join(states, ",")
}

// updateClaimStatus is Kubernetes' resourceclaimStatusStrategy: the spec
// and metadata stay; the status is judged against the one before.
func updateClaimStatus(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
	prev := cur.(*resourcev1.ResourceClaim)
	out := prev.DeepCopy()
	out.Status = next.(*resourcev1.ResourceClaim).Status
	return out, validateClaimStatus(out, prev)
}

// validateClaimStatus is ValidateResourceClaimStatusUpdate: unique
// consumers, only for an allocated claim, none added once the claim is
// being deleted; an allocation, once made, never changes (it is cleared
// and made again), and a new one names the claim's requests.
func validateClaimStatus(c, old *resourcev1.ResourceClaim) field.ErrorList {
	status := field.NewPath("status")
	reserved := status.Child("reservedFor")
	errs := validateSet(c.Status.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize,
		func(ref resourcev1.ResourceClaimConsumerReference) types.UID { return ref.UID }, validateConsumer, reserved)
	if len(c.Status.ReservedFor) > 0 {
		if c.Status.Allocation == nil {
			errs = append(errs, field.Forbidden(reserved, "may not be specified when `allocated` is not set"))
		} else if c.DeletionTimestamp != nil && !sets.New(old.Status.ReservedFor...).IsSuperset(sets.New(c.Status.ReservedFor...)) {
			errs = append(errs, field.Forbidden(reserved, "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
		}
	}
	switch {
	case old.Status.Allocation != nil && c.Status.Allocation != nil:
		errs = append(errs, apivalidation.ValidateImmutableField(c.Status.Allocation, old.Status.Allocation, status.Child("allocation"))...)
	case c.Status.Allocation != nil:
		errs = append(errs, validateAllocation(c.Status.Allocation, requestNamesOf(&c.Spec.Devices), status.Child("allocation"))...)
	}
	return errs
}

// validateConsumer: a pod (or other object) using the claim, by resource,
// name and uid.
func validateConsumer(ref resourcev1.ResourceClaimConsumerReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Resource == "" {
		errs = append(errs, field.Required(path.Child("resource"), ""))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	}
	if ref.UID == "" {
		errs = append(errs, field.Required(path.Child("uid"), ""))
	}
	return errs
}

// validateAllocation: each result is a device of a driver's pool, for
// one of the claim's requests.
func validateAllocation(a *resourcev1.AllocationResult, names requestNames, path *field.Path) field.ErrorList {
	errs := validateList(a.Devices.Results, resourcev1.AllocationResultsMaxSize, func(r resourcev1.DeviceRequestAllocationResult, p *field.Path) field.ErrorList {
		errs := validateRequestRef(r.Request, names, p.Child("request"))
		errs = append(errs, validateDriverName(r.Driver, p.Child("driver"))...)
		errs = append(errs, validatePoolName(r.Pool, p.Child("pool"))...)
		errs = append(errs, validateDNSLabel(r.Device, p.Child("device"))...)
		return append(errs, validateTolerations(r.Tolerations, p.Child("tolerations"))...)
	}, path.Child("devices", "results"))
	config := path.Child("devices", "config")
	for i, c := range a.Devices.Config {
		p := config.Index(i)
		switch c.Source {
		case resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass:
		case "":
			errs = append(errs, field.Required(p.Child("source"), ""))
		default:
			errs = append(errs, field.NotSupported(p.Child("source"), c.Source,
				[]resourcev1.AllocationConfigSource{resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass}))
		}
		errs = append(errs, validateRequestRefs(c.Requests, names, p.Child("requests"))...)
		errs = append(errs, validateDeviceConfiguration(c.DeviceConfiguration, p)...)
	}
	if a.NodeSelector != nil {
		errs = append(errs, core.ValidateNodeSelector(a.NodeSelector, path.Child("nodeSelector"))...)
	}
	return errs
}
