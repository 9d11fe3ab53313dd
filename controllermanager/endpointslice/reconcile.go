package endpointslice

import (
	"maps"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// plan is the writes that bring a Service's slices to the desired state:
// slices to create (named by generateName), existing slices with new
// content (copies, with their resourceVersion, so a stale one is a
// Conflict), and slices to delete.
type plan struct {
	create, update, remove []*discoveryv1.EndpointSlice
}

func (p plan) empty() bool { return len(p.create)+len(p.update)+len(p.remove) == 0 }

// reconcile plans the writes for one Service, whose desired endpoints are
// groups, given the slices of it that exist. Kubernetes' reconciler packs
// endpoints more cleverly; this one keeps the same guarantees in fewer
// steps:
//
//  1. A slice that is not this Service's (an old Service of the same name
//     owns it) or of an address type it no longer has goes.
//  2. Each slice of a desired group keeps the endpoints it has that are
//     still desired, with their new conditions; one left empty goes.
//  3. The group's new endpoints fill the slices being written anyway,
//     then the fullest slice they all fit in, then new slices of at most
//     maxPerSlice.
//  4. A Service with no endpoints at all keeps one empty "placeholder"
//     slice, so that clients can tell "no endpoints" from "not synced".
//  5. A slice to delete is reused for one to create (same address type),
//     which is an update instead of a delete and a create.
//
// Nothing that is already as desired is written: a sync with no change
// plans nothing.
func reconcile(svc *corev1.Service, groups []group, existing []*discoveryv1.EndpointSlice, maxPerSlice int) plan {
	var p plan
	labels := sliceLabels(svc)
	types := map[discoveryv1.AddressType]bool{}
	for _, t := range addressTypes(svc) {
		types[t] = true
	}
	wanted := map[string]bool{}
	for _, g := range groups {
		wanted[g.key()] = true
	}
	byGroup := map[string][]*discoveryv1.EndpointSlice{}
	var unwanted []*discoveryv1.EndpointSlice // the Service's, in no desired group
	for _, s := range sortedByName(existing) {
		k := groupKey(s.AddressType, s.Ports)
		switch {
		case !ownedBy(s, svc) || !types[s.AddressType]:
			p.remove = append(p.remove, s) // step 1
		case wanted[k]:
			byGroup[k] = append(byGroup[k], s)
		default:
			unwanted = append(unwanted, s)
		}
	}
	kept := 0
	for _, g := range groups {
		created, updated, n, emptied := fillGroup(svc, labels, g, byGroup[g.key()], maxPerSlice)
		p.create, p.update, kept = append(p.create, created...), append(p.update, updated...), kept+n
		unwanted = append(unwanted, emptied...)
	}
	// Step 4: with nothing kept or made, the placeholder stays, or is made.
	if kept == 0 && len(p.create) == 0 {
		placeholder := newSlice(svc, labels, addressTypes(svc)[0], []discoveryv1.EndpointPort{})
		if i := indexOfPlaceholder(unwanted, placeholder); i >= 0 {
			if s := withContent(unwanted[i], labels, nil, placeholder.Ports); s != nil {
				p.update = append(p.update, s)
			}
			unwanted = append(unwanted[:i], unwanted[i+1:]...)
		} else {
			p.create = append(p.create, placeholder)
		}
	}
	// Step 5: recycle what would be deleted into what would be created.
	for i := 0; i < len(unwanted) && len(p.create) > 0; {
		c := p.create[len(p.create)-1]
		if unwanted[i].AddressType != c.AddressType {
			i++
			continue
		}
		if s := withContent(unwanted[i], c.Labels, c.Endpoints, c.Ports); s != nil { // nil: it is that slice already
			p.update = append(p.update, s)
		}
		p.create = p.create[:len(p.create)-1]
		unwanted = append(unwanted[:i], unwanted[i+1:]...)
	}
	p.remove = append(p.remove, unwanted...)
	return p
}

// fillGroup is steps 2 and 3 for one group and its existing slices. It
// returns the slices to create and to update, how many slices keep
// endpoints, and the slices left empty.
func fillGroup(svc *corev1.Service, labels map[string]string, g group, slices []*discoveryv1.EndpointSlice,
	maxPerSlice int) (created, updated []*discoveryv1.EndpointSlice, kept int, emptied []*discoveryv1.EndpointSlice) {
	want := map[string]discoveryv1.Endpoint{}
	for _, ep := range g.endpoints {
		want[endpointKey(ep)] = ep
	}
	// Step 2: each slice keeps what it has of the desired endpoints.
	content := make([][]discoveryv1.Endpoint, len(slices))
	for i, s := range slices {
		for _, ep := range s.Endpoints {
			if d, ok := want[endpointKey(ep)]; ok {
				content[i] = append(content[i], d)
				delete(want, endpointKey(ep)) // placed; a copy in a second slice goes
			}
		}
	}
	var rest []discoveryv1.Endpoint // desired, in no slice yet, in the group's order
	for _, ep := range g.endpoints {
		if _, ok := want[endpointKey(ep)]; ok {
			rest = append(rest, ep)
		}
	}
	// Step 3: fill the slices that change anyway, then the fullest that
	// takes all of the rest, then new ones.
	changes := func(i int) bool { return withContent(slices[i], labels, content[i], g.ports) != nil }
	for i := range slices {
		if len(content[i]) > 0 && changes(i) {
			n := min(maxPerSlice-len(content[i]), len(rest))
			content[i], rest = append(content[i], rest[:max(n, 0)]...), rest[max(n, 0):]
		}
	}
	if fullest := -1; len(rest) > 0 {
		for i := range slices {
			if len(content[i]) > 0 && len(content[i])+len(rest) <= maxPerSlice && (fullest < 0 || len(content[i]) > len(content[fullest])) {
				fullest = i
			}
		}
		if fullest >= 0 {
			content[fullest], rest = append(content[fullest], rest...), nil
		}
	}
	for i, s := range slices {
		if len(content[i]) == 0 {
			emptied = append(emptied, s)
			continue
		}
		kept++
		sortEndpoints(content[i])
		if u := withContent(s, labels, content[i], g.ports); u != nil {
			updated = append(updated, u)
		}
	}
	for len(rest) > 0 {
		n := min(maxPerSlice, len(rest))
		s := newSlice(svc, labels, g.addressType, g.ports)
		s.Endpoints = append(s.Endpoints, rest[:n]...)
		created, rest = append(created, s), rest[n:]
	}
	return created, updated, kept, emptied
}

// withContent is a copy of s with these labels, endpoints and ports, or
// nil if s has them already. The labels replace the slice's, as in
// Kubernetes: a label removed from the Service goes from its slices.
func withContent(s *discoveryv1.EndpointSlice, labels map[string]string, eps []discoveryv1.Endpoint, ports []discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	if eps == nil {
		eps = []discoveryv1.Endpoint{}
	}
	if equality.Semantic.DeepEqual(s.Endpoints, eps) && equality.Semantic.DeepEqual(s.Ports, ports) &&
		equality.Semantic.DeepEqual(s.Labels, labels) {
		return nil
	}
	out := s.DeepCopy()
	out.Labels = maps.Clone(labels)
	out.Endpoints, out.Ports = eps, ports
	return out
}

// newSlice is an empty slice of the Service: named <service>-<random>,
// controlled by the Service, so that the garbage collector deletes it
// with the Service.
func newSlice(svc *corev1.Service, labels map[string]string, t discoveryv1.AddressType, ports []discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	ref := metav1.NewControllerRef(svc, corev1.SchemeGroupVersion.WithKind("Service"))
	return &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: slicePrefix(svc.Name), Namespace: svc.Namespace,
			Labels: maps.Clone(labels), OwnerReferences: []metav1.OwnerReference{*ref}},
		AddressType: t, Ports: ports, Endpoints: []discoveryv1.Endpoint{},
	}
}

// slicePrefix is "<service>-", or the bare name when the dash would make
// it too long a name.
func slicePrefix(service string) string {
	if len(apivalidation.NameIsDNSSubdomain(service+"-", true)) != 0 {
		return service
	}
	return service + "-"
}

// sliceLabels are the Service's labels, less the ones the controller
// owns, plus those: the Service's name, the manager, and headless for a
// Service without a ClusterIP.
func sliceLabels(svc *corev1.Service) map[string]string {
	out := map[string]string{}
	for k, v := range svc.Labels {
		if k != discoveryv1.LabelServiceName && k != discoveryv1.LabelManagedBy && k != corev1.IsHeadlessService {
			out[k] = v
		}
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.ClusterIP == "" {
		out[corev1.IsHeadlessService] = ""
	}
	out[discoveryv1.LabelServiceName] = svc.Name
	out[discoveryv1.LabelManagedBy] = ManagedBy
	return out
}

func ownedBy(s *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	for _, ref := range s.OwnerReferences {
		if ref.UID == svc.UID && ref.Kind == "Service" && ref.APIVersion == "v1" {
			return true
		}
	}
	return false
}

// indexOfPlaceholder finds a slice that is already the placeholder.
func indexOfPlaceholder(slices []*discoveryv1.EndpointSlice, placeholder *discoveryv1.EndpointSlice) int {
	for i, s := range slices {
		if s.AddressType == placeholder.AddressType && len(s.Endpoints) == 0 && len(s.Ports) == 0 {
			return i
		}
	}
	return -1
}

func sortedByName(slices []*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	out := append([]*discoveryv1.EndpointSlice(nil), slices...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
