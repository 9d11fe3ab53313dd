package endpointslice

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	netutils "k8s.io/utils/net"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/internal/podcondition"
)

// group is the desired endpoints of one address type that share one list
// of ports: endpoints of one group may share a slice, of two groups never
// (a slice's ports apply to each of its endpoints).
type group struct {
	addressType discoveryv1.AddressType
	ports       []discoveryv1.EndpointPort
	endpoints   []discoveryv1.Endpoint // sorted by address
}

// key names a group: its address type and ports, in the Service's order.
func (g group) key() string { return groupKey(g.addressType, g.ports) }

func groupKey(t discoveryv1.AddressType, ports []discoveryv1.EndpointPort) string {
	parts := []string{string(t)}
	for _, p := range ports {
		parts = append(parts, fmt.Sprintf("%s:%d/%s/%s", ptr.Deref(p.Name, ""), ptr.Deref(p.Port, 0),
			ptr.Deref(p.Protocol, ""), ptr.Deref(p.AppProtocol, "")))
	}
	return strings.Join(parts, " ")
}

// desiredGroups turns the pods a Service selects into endpoints, grouped
// by address type and resolved ports: two pods whose named target port
// is 8080 in one and 9090 in the other are in two groups, so in two
// slices. zoneOf gives a node's topology.kubernetes.io/zone label ("" if
// none).
func desiredGroups(svc *corev1.Service, pods []*corev1.Pod, zoneOf func(node string) string) []group {
	byKey := map[string]*group{}
	for _, pod := range pods {
		if !inEndpoints(pod) {
			continue
		}
		ports := endpointPorts(svc, pod)
		for _, t := range addressTypes(svc) {
			ep := podToEndpoint(svc, pod, t, zoneOf(pod.Spec.NodeName))
			if len(ep.Addresses) == 0 {
				continue // no IP of this family
			}
			k := groupKey(t, ports)
			g := byKey[k]
			if g == nil {
				g = &group{addressType: t, ports: ports}
				byKey[k] = g
			}
			g.endpoints = append(g.endpoints, ep)
		}
	}
	out := make([]group, 0, len(byKey))
	for _, g := range byKey {
		sortEndpoints(g.endpoints)
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// inEndpoints is Kubernetes' ShouldPodBeInEndpoints with terminating pods
// included: a pod that has finished (Succeeded or Failed) or has no IP
// yet is no endpoint; one being deleted still is, with terminating=true,
// so that proxies can drain it.
func inEndpoints(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	return pod.Status.PodIP != "" || len(pod.Status.PodIPs) > 0
}

// podToEndpoint is one pod as an endpoint of an address type, with the
// three conditions as Kubernetes computes them:
//
//	serving     = the pod is Ready (its readiness probes pass), terminating or not
//	terminating = the pod has a deletionTimestamp
//	ready       = serving and not terminating, or always with publishNotReadyAddresses
//
// so a pod being deleted is never ready, but stays serving while its
// probes pass.
func podToEndpoint(svc *corev1.Service, pod *corev1.Pod, t discoveryv1.AddressType, zone string) discoveryv1.Endpoint {
	serving := podcondition.IsReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := discoveryv1.Endpoint{
		Addresses:  podAddresses(pod, t),
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if pod.Spec.NodeName != "" {
		ep.NodeName = ptr.To(pod.Spec.NodeName)
	}
	if zone != "" {
		ep.Zone = ptr.To(zone)
	}
	// A pod with spec.hostname and spec.subdomain naming this Service has
	// a DNS name of its own: <hostname>.<service>.<namespace>.svc.
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name {
		ep.Hostname = ptr.To(pod.Spec.Hostname)
	}
	return ep
}

// podAddresses are the pod's IPs of the family t (status.podIPs, or
// status.podIP from a writer that sets only that).
func podAddresses(pod *corev1.Pod, t discoveryv1.AddressType) []string {
	ips := []string{}
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = append(ips, pod.Status.PodIP)
	}
	var out []string
	for _, ip := range ips {
		if netutils.IsIPv6String(ip) == (t == discoveryv1.AddressTypeIPv6) {
			out = append(out, ip)
		}
	}
	return out
}

// addressTypes are the slices' address types for a Service: one per IP
// family it has (IPv4 for mkube's single-stack Services).
func addressTypes(svc *corev1.Service) []discoveryv1.AddressType {
	var out []discoveryv1.AddressType
	for _, f := range svc.Spec.IPFamilies {
		switch f {
		case corev1.IPv4Protocol:
			out = append(out, discoveryv1.AddressTypeIPv4)
		case corev1.IPv6Protocol:
			out = append(out, discoveryv1.AddressTypeIPv6)
		}
	}
	if len(out) == 0 {
		out = []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4}
	}
	return out
}

// endpointPorts resolves each Service port against the pod: a number
// targetPort as it is, a named one through the pod's container ports (and
// its sidecars', init containers that keep running) of the same protocol.
// A name the pod does not have drops that port for this pod, as
// Kubernetes does.
func endpointPorts(svc *corev1.Service, pod *corev1.Pod) []discoveryv1.EndpointPort {
	out := []discoveryv1.EndpointPort{}
	for _, sp := range svc.Spec.Ports {
		port, ok := findPort(pod, sp)
		if !ok {
			continue
		}
		out = append(out, discoveryv1.EndpointPort{Name: ptr.To(sp.Name), Port: ptr.To(port),
			Protocol: ptr.To(sp.Protocol), AppProtocol: sp.AppProtocol})
	}
	return out
}

func findPort(pod *corev1.Pod, sp corev1.ServicePort) (int32, bool) {
	if sp.TargetPort.Type == intstr.Int {
		return sp.TargetPort.IntVal, true
	}
	containers := pod.Spec.Containers
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers[:len(containers):len(containers)], c)
		}
	}
	for _, c := range containers {
		for _, cp := range c.Ports {
			if cp.Name == sp.TargetPort.StrVal && cp.Protocol == sp.Protocol {
				return cp.ContainerPort, true
			}
		}
	}
	return 0, false
}

// sortEndpoints orders a slice's endpoints by address, then by pod, so
// that the same endpoints are always written the same way.
func sortEndpoints(eps []discoveryv1.Endpoint) {
	sort.SliceStable(eps, func(i, j int) bool {
		a, b := strings.Join(eps[i].Addresses, ","), strings.Join(eps[j].Addresses, ",")
		if a != b {
			return a < b
		}
		return endpointKey(eps[i]) < endpointKey(eps[j])
	})
}

// endpointKey is an endpoint's identity across syncs: the pod it stands
// for (its UID, so a pod recreated under the same name is a new
// endpoint), or its addresses when it names no pod.
func endpointKey(ep discoveryv1.Endpoint) string {
	if ep.TargetRef != nil {
		return "pod " + ep.TargetRef.Namespace + "/" + ep.TargetRef.Name + " " + string(ep.TargetRef.UID)
	}
	return "addresses " + strings.Join(ep.Addresses, ",")
}
