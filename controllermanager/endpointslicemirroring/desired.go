package endpointslicemirroring

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// MaxEndpointsPerSubset is kube-controller-manager's
// --mirroring-max-endpoints-per-subset: a subset's addresses past it are
// not mirrored, and the Endpoints is marked as truncated.
const MaxEndpointsPerSubset = 1000

// desiredSlice is one slice the Endpoints should have, by its key: the
// subset's ports and the address type, which every endpoint of a slice
// shares.
type desiredSlice struct {
	key   string
	slice *discoveryv1.EndpointSlice
}

// desiredSlices mirrors an Endpoints: each subset's ready addresses as
// ready endpoints, its notReadyAddresses as not ready, split by address
// family (a slice has one), subsets with the same ports merged into one
// slice, as Kubernetes' mirroring reconciler does. An address that is no
// IP is skipped (a slice cannot hold it).
func desiredSlices(ep *corev1.Endpoints) []desiredSlice {
	byKey := map[string]*desiredSlice{}
	var keys []string
	for _, subset := range ep.Subsets {
		ports := slicePorts(subset.Ports)
		add := func(addr corev1.EndpointAddress, ready bool) {
			ip, err := netip.ParseAddr(addr.IP)
			if err != nil {
				return
			}
			addrType := discoveryv1.AddressTypeIPv4
			if ip.Is6() {
				addrType = discoveryv1.AddressTypeIPv6
			}
			key := portsKey(ports) + "/" + string(addrType)
			d, ok := byKey[key]
			if !ok {
				d = &desiredSlice{key: key, slice: newSlice(ep, ports, addrType)}
				byKey[key] = d
				keys = append(keys, key)
			}
			if len(d.slice.Endpoints) >= MaxEndpointsPerSubset {
				return
			}
			d.slice.Endpoints = append(d.slice.Endpoints, discoveryv1.Endpoint{
				Addresses:  []string{addr.IP},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
				Hostname:   ptrOrNil(addr.Hostname),
				NodeName:   addr.NodeName,
				TargetRef:  addr.TargetRef,
			})
		}
		for _, a := range subset.Addresses {
			add(a, true)
		}
		for _, a := range subset.NotReadyAddresses {
			add(a, false)
		}
	}
	out := make([]desiredSlice, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// newSlice is an empty mirrored slice: the Endpoints' labels and
// annotations (but its trigger time and kubectl's last-applied), the
// service-name and managed-by labels, and the Endpoints as controlling
// owner, so that deleting it takes its slices with it.
func newSlice(ep *corev1.Endpoints, ports []discoveryv1.EndpointPort, addrType discoveryv1.AddressType) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: slicePrefix(ep.Name), Namespace: ep.Namespace,
			Labels: map[string]string{}, Annotations: map[string]string{},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ep, corev1.SchemeGroupVersion.WithKind("Endpoints"))},
		},
		AddressType: addrType, Ports: ports, Endpoints: []discoveryv1.Endpoint{},
	}
	for k, v := range ep.Labels {
		s.Labels[k] = v
	}
	s.Labels[discoveryv1.LabelServiceName] = ep.Name
	s.Labels[discoveryv1.LabelManagedBy] = ManagedBy
	for k, v := range ep.Annotations {
		if k != corev1.EndpointsLastChangeTriggerTime && k != corev1.LastAppliedConfigAnnotation {
			s.Annotations[k] = v
		}
	}
	return s
}

// slicePrefix is a slice's generateName, "<endpoints>-", the name cut so
// that the generated suffix fits a DNS subdomain.
func slicePrefix(name string) string {
	const maxPrefix = 63 - 6 // room for the generated five characters
	if len(name) > maxPrefix-1 {
		name = name[:maxPrefix-1]
	}
	return name + "-"
}

func slicePorts(in []corev1.EndpointPort) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, 0, len(in))
	for _, p := range in {
		out = append(out, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(p.Port),
			Protocol: ptr.To(cmp.Or(p.Protocol, corev1.ProtocolTCP)), AppProtocol: p.AppProtocol})
	}
	return out
}

// portsKey names a set of ports whatever their order.
func portsKey(ports []discoveryv1.EndpointPort) string {
	parts := make([]string, 0, len(ports))
	for _, p := range ports {
		parts = append(parts, *p.Name+":"+strconv.Itoa(int(*p.Port))+"/"+string(*p.Protocol))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// keyOf is the key of an existing slice, as desiredSlices computes it.
func keyOf(s *discoveryv1.EndpointSlice) string {
	return portsKey(s.Ports) + "/" + string(s.AddressType)
}

func ptrOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
