package networking

import (
	"fmt"
	"sort"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
)

// Ingresses route HTTP from outside the cluster to Services: a rule per
// host, a backend per path, and a default backend for the rest. The
// status subresource is where an ingress controller writes the address
// it serves them on.
var Ingresses = &apiserver.Resource{
	GroupVersion: networkingv1.SchemeGroupVersion, Name: "ingresses", Kind: "Ingress", Namespaced: true,
	ShortNames:   []string{"ing"},
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	// Kubernetes' ingress status strategy keeps only the spec: a status
	// write may change labels and annotations too.
	StatusWritesMetadata: true,
	New:                  func() runtime.Object { return &networkingv1.Ingress{} },
	NewList:              func() runtime.Object { return &networkingv1.IngressList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*networkingv1.Ingress).Status = networkingv1.IngressStatus{} // create cannot set status
	},
	Validate: validateIngress,
	Columns: []apiserver.Column{{Name: "Class", Type: "string"}, {Name: "Hosts", Type: "string"},
		{Name: "Address", Type: "string"}, {Name: "Ports", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		ing := obj.(*networkingv1.Ingress)
		class := "<none>"
		if ing.Spec.IngressClassName != nil {
			class = *ing.Spec.IngressClassName
		}
		return []any{class, ingressHosts(ing.Spec.Rules), ingressAddress(ing.Status.LoadBalancer),
			ingressPorts(ing.Spec.TLS), apiserver.Age(ing.CreationTimestamp, now)}
	},
}

// maxHosts is how many hosts kubectl's HOSTS column names before it
// counts the rest (Kubernetes' formatHosts).
const maxHosts = 3

// ingressHosts is the HOSTS cell: the rules' hosts, the first three and
// "+ N more...", or * when no rule names a host (every host matches).
func ingressHosts(rules []networkingv1.IngressRule) string {
	var hosts []string
	more := false // a rule came after the third host
	for _, r := range rules {
		if len(hosts) == maxHosts {
			more = true
		} else if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	out := strings.Join(hosts, ",")
	if more {
		out += fmt.Sprintf(" + %d more...", len(rules)-maxHosts)
	}
	return out
}

// addressWidth is where kubectl cuts a long ADDRESS cell without -o wide
// (Kubernetes' loadBalancerWidth).
const addressWidth = 16

// ingressAddress is the ADDRESS cell: the load balancer's IPs, or its
// hostnames where it has no IP, sorted and without repeats.
func ingressAddress(lb networkingv1.IngressLoadBalancerStatus) string {
	seen := map[string]bool{}
	var addrs []string
	for _, in := range lb.Ingress {
		a := in.IP
		if a == "" {
			a = in.Hostname
		}
		if a != "" && !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	sort.Strings(addrs)
	out := strings.Join(addrs, ",")
	if len(out) > addressWidth {
		out = out[:addressWidth-3] + "..."
	}
	return out
}

// ingressPorts is the PORTS cell: an ingress serves HTTP on 80, and HTTPS
// on 443 as well once it has a TLS section.
func ingressPorts(tls []networkingv1.IngressTLS) string {
	if len(tls) > 0 {
		return "80, 443"
	}
	return "80"
}
