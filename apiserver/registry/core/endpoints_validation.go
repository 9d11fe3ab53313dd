package core

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// ValidateEndpointIP is Kubernetes' check of an address traffic is sent
// to, an Endpoints' or an EndpointSlice's: an IP, and not unspecified,
// loopback or link-local, which no Service proxy could send a client to.
func ValidateEndpointIP(a string, path *field.Path) field.ErrorList {
	ip := netutils.ParseIPSloppy(a)
	if ip == nil {
		return field.ErrorList{field.Invalid(path, a, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if ip.IsUnspecified() {
		errs = append(errs, field.Invalid(path, a, fmt.Sprintf("may not be unspecified (%v)", a)))
	}
	if ip.IsLoopback() {
		errs = append(errs, field.Invalid(path, a, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(path, a, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(path, a, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// defaultEndpoints gives a port without a protocol TCP, as Kubernetes'
// SetDefaults_EndpointPort does.
func defaultEndpoints(obj runtime.Object) {
	ep := obj.(*corev1.Endpoints)
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		for j := range ss.Ports {
			if ss.Ports[j].Protocol == "" {
				ss.Ports[j].Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// validateEndpoints is Kubernetes' check of an Endpoints' subsets: each
// has addresses (ready or not) that ValidateEndpointIP accepts, and
// ports of a number and a known protocol, named when there are several.
func validateEndpoints(ep *corev1.Endpoints) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range ep.Subsets {
		path := field.NewPath("subsets").Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(path, "must specify `addresses` or `notReadyAddresses`"))
		}
		for name, addrs := range map[string][]corev1.EndpointAddress{"addresses": ss.Addresses, "notReadyAddresses": ss.NotReadyAddresses} {
			for j, a := range addrs {
				errs = append(errs, ValidateEndpointIP(a.IP, path.Child(name).Index(j).Child("ip"))...)
			}
		}
		for j, p := range ss.Ports {
			pp := path.Child("ports").Index(j)
			if len(ss.Ports) > 1 && p.Name == "" {
				errs = append(errs, field.Required(pp.Child("name"), ""))
			} else if p.Name != "" {
				for _, msg := range validation.IsDNS1123Label(p.Name) {
					errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
				}
			}
			for _, msg := range validation.IsValidPortNum(int(p.Port)) {
				errs = append(errs, field.Invalid(pp.Child("port"), p.Port, msg))
			}
			protocols := []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}
			if p.Protocol == "" {
				errs = append(errs, field.Required(pp.Child("protocol"), ""))
			} else if !slices.Contains(protocols, p.Protocol) {
				errs = append(errs, field.NotSupported(pp.Child("protocol"), p.Protocol, protocols))
			}
		}
	}
	return errs
}
