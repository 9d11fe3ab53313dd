package networking

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// IPAddresses are Kubernetes' record of an allocated IP: the object's
// name is the address ("10.96.0.10", "2001:db8::1"), so two owners cannot
// both create it, and spec.parentRef names its owner (the Service).
var IPAddresses = &apiserver.Resource{
	GroupVersion: networkingv1.SchemeGroupVersion, Name: "ipaddresses", Kind: "IPAddress",
	ShortNames: []string{"ip"},
	New:        func() runtime.Object { return &networkingv1.IPAddress{} },
	NewList:    func() runtime.Object { return &networkingv1.IPAddressList{} },
	NameRule:   ipAddressName,
	Validate:   validateIPAddress,
	// Kubernetes' printer has no AGE column for IPAddresses.
	Columns: []apiserver.Column{{Name: "ParentRef", Type: "string"}},
	Row: func(obj runtime.Object, _ time.Time) []any {
		return []any{parentRefCell(obj.(*networkingv1.IPAddress).Spec.ParentRef)}
	},
}

// parentRefCell is the PARENTREF cell: resource.group/namespace/name.
func parentRefCell(ref *networkingv1.ParentReference) string {
	if ref == nil {
		return "<none>"
	}
	out := strings.ToLower(schema.GroupResource{Group: ref.Group, Resource: ref.Resource}.String())
	if ref.Namespace != "" {
		out += "/" + ref.Namespace
	}
	return out + "/" + ref.Name
}

// ipAddressName is Kubernetes' ValidateIPAddressName: the name is an IP
// in canonical form ("2001:db8::1", not "2001:0db8::1"). Names are never
// generated, so prefix does not matter.
func ipAddressName(name string, _ bool) []string {
	var msgs []string
	for _, err := range validation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, err.Detail)
	}
	return msgs
}

// validateIPAddress is Kubernetes' ValidateIPAddress and
// ValidateIPAddressUpdate: a complete parentRef, fixed once created.
func validateIPAddress(obj, old runtime.Object) field.ErrorList {
	ip := obj.(*networkingv1.IPAddress)
	path := field.NewPath("spec", "parentRef")
	ref := ip.Spec.ParentRef
	if ref == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	// The core group, the Services', is "": group cannot be required.
	if ref.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Group) {
			errs = append(errs, field.Invalid(path.Child("group"), ref.Group, msg))
		}
	}
	errs = append(errs, requiredPathSegment(ref.Resource, path.Child("resource"))...)
	errs = append(errs, requiredPathSegment(ref.Name, path.Child("name"))...)
	if ref.Namespace != "" {
		errs = append(errs, requiredPathSegment(ref.Namespace, path.Child("namespace"))...)
	}
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(ref, old.(*networkingv1.IPAddress).Spec.ParentRef, path)...)
	}
	return errs
}
