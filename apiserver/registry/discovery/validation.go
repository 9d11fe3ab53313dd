package discovery

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/mkube/mkube/apiserver/registry/core"
)

// Kubernetes' limits on a slice. maxPorts was 100 until Kubernetes 1.21
// (and its backports): a Service may have more ports than that, and the
// controller put them all in each slice, so the limit went up to 20,000
// rather than the controller learning to split ports.
const (
	maxAddresses = 100 // per endpoint; the controller writes exactly 1
	maxEndpoints = 1000
	maxPorts     = 20000
	maxZoneHints = 8
	maxNodeHints = 8
)

var (
	addressTypes  = sets.New(discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN)
	portProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)
)

// validateEndpointSlice is Kubernetes' ValidateEndpointSliceCreate and
// ValidateEndpointSliceUpdate (metadata is checked for every kind by the
// server, names as DNS subdomains, as ValidateEndpointSliceName does). On
// an update, endpoints that did not change are not checked again: they
// may hold addresses an older, looser rule let in.
func validateEndpointSlice(obj, old runtime.Object) field.ErrorList {
	s := obj.(*discoveryv1.EndpointSlice)
	errs := validateAddressType(s.AddressType)
	errs = append(errs, validatePorts(s.Ports, field.NewPath("ports"))...)
	var prev *discoveryv1.EndpointSlice
	if old != nil {
		prev = old.(*discoveryv1.EndpointSlice)
	}
	if prev == nil || !equality.Semantic.DeepEqual(prev.Endpoints, s.Endpoints) {
		errs = append(errs, validateEndpoints(s.Endpoints, s.AddressType, field.NewPath("endpoints"))...)
	}
	if prev != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(s.AddressType, prev.AddressType, field.NewPath("addressType"))...)
	}
	return errs
}

func validateAddressType(t discoveryv1.AddressType) field.ErrorList {
	path := field.NewPath("addressType")
	switch {
	case t == "":
		return field.ErrorList{field.Required(path, "")}
	case !addressTypes.Has(t):
		return field.ErrorList{field.NotSupported(path, t, sets.List(addressTypes))}
	}
	return nil
}

func validateEndpoints(endpoints []discoveryv1.Endpoint, t discoveryv1.AddressType, path *field.Path) field.ErrorList {
	if len(endpoints) > maxEndpoints {
		return field.ErrorList{field.TooMany(path, len(endpoints), maxEndpoints)}
	}
	var errs field.ErrorList
	for i, ep := range endpoints {
		at := path.Index(i)
		addrs := at.Child("addresses")
		if len(ep.Addresses) == 0 {
			errs = append(errs, field.Required(addrs, "must contain at least 1 address"))
		} else if len(ep.Addresses) > maxAddresses {
			errs = append(errs, field.TooMany(addrs, len(ep.Addresses), maxAddresses))
		}
		for j, a := range ep.Addresses {
			errs = append(errs, validateAddress(a, t, addrs.Index(j))...)
		}
		if ep.NodeName != nil {
			for _, msg := range apivalidation.NameIsDNSSubdomain(*ep.NodeName, false) {
				errs = append(errs, field.Invalid(at.Child("nodeName"), *ep.NodeName, msg))
			}
		}
		if ep.Hostname != nil {
			errs = append(errs, dns1123Label(*ep.Hostname, at.Child("hostname"))...)
		}
		if ep.Hints != nil {
			errs = append(errs, validateHints(ep.Hints, at.Child("hints"))...)
		}
	}
	return errs
}

// validateAddress checks one address against the slice's type. An IP
// must be of the family, and one traffic can be sent to: not unspecified,
// loopback or link-local (core.ValidateEndpointIP, shared with
// Endpoints). An unknown type is not checked: validateAddressType
// has refused it already.
func validateAddress(a string, t discoveryv1.AddressType, path *field.Path) field.ErrorList {
	switch t {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		ip := netutils.ParseIPSloppy(a)
		if t == discoveryv1.AddressTypeIPv4 && (ip == nil || ip.To4() == nil) {
			return field.ErrorList{field.Invalid(path, a, "must be a valid IPv4 address")}
		}
		if t == discoveryv1.AddressTypeIPv6 && (ip == nil || ip.To4() != nil) {
			return field.ErrorList{field.Invalid(path, a, "must be a valid IPv6 address")}
		}
		return core.ValidateEndpointIP(a, path)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(path, a)
	}
	return nil
}

// validatePorts: names are DNS labels ("" allowed once), unique in the
// slice, with a known protocol and a qualified appProtocol.
func validatePorts(ports []discoveryv1.EndpointPort, path *field.Path) field.ErrorList {
	if len(ports) > maxPorts {
		return field.ErrorList{field.TooMany(path, len(ports), maxPorts)}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, p := range ports {
		at := path.Index(i)
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if name != "" {
			errs = append(errs, dns1123Label(name, at.Child("name"))...)
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(at.Child("name"), name))
		}
		names.Insert(name)
		switch {
		case p.Protocol == nil:
			errs = append(errs, field.Required(at.Child("protocol"), ""))
		case !portProtocols.Has(*p.Protocol):
			errs = append(errs, field.NotSupported(at.Child("protocol"), *p.Protocol, sets.List(portProtocols)))
		}
		if p.AppProtocol != nil {
			for _, msg := range content.IsQualifiedName(*p.AppProtocol) {
				errs = append(errs, field.Invalid(at.Child("appProtocol"), *p.AppProtocol, msg))
			}
		}
	}
	return errs
}

// validateHints: at most 8 zones and 8 nodes, each named once, zones as
// label values, nodes as node names.
func validateHints(h *discoveryv1.EndpointHints, path *field.Path) field.ErrorList {
	zones := path.Child("forZones")
	if len(h.ForZones) > maxZoneHints {
		return field.ErrorList{field.TooMany(zones, len(h.ForZones), maxZoneHints)}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, z := range h.ForZones {
		at := zones.Index(i).Child("name")
		if seen.Has(z.Name) {
			errs = append(errs, field.Duplicate(at, z.Name))
		}
		seen.Insert(z.Name)
		for _, msg := range content.IsLabelValue(z.Name) {
			errs = append(errs, field.Invalid(at, z.Name, msg))
		}
	}
	nodes := path.Child("forNodes")
	if len(h.ForNodes) > maxNodeHints {
		return append(errs, field.TooMany(nodes, len(h.ForNodes), maxNodeHints))
	}
	seen = sets.New[string]()
	for i, n := range h.ForNodes {
		at := nodes.Index(i).Child("name")
		if seen.Has(n.Name) {
			errs = append(errs, field.Duplicate(at, n.Name))
		}
		seen.Insert(n.Name)
		for _, msg := range apivalidation.NameIsDNSSubdomain(n.Name, false) {
			errs = append(errs, field.Invalid(at, n.Name, msg))
		}
	}
	return errs
}

// dns1123Label is core validation's ValidateDNS1123Label.
func dns1123Label(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range content.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}
