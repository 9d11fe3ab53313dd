package networking

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// validIngress is the conformance spec's: a default backend and one rule.
func validIngress() *networkingv1.Ingress {
	backend := func(name string) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name,
			Port: networkingv1.ServiceBackendPort{Number: 8080}}}
	}
	def := backend("default-backend")
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &def, Rules: []networkingv1.IngressRule{{Host: "foo.bar.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: backend("test-backend")}}}}}}},
	}
}

func firstPath(ing *networkingv1.Ingress) *networkingv1.HTTPIngressPath {
	return &ing.Spec.Rules[0].HTTP.Paths[0]
}

// expect checks errs against a table row: no error when field is "", else
// an error on field whose message holds detail.
func expect(t *testing.T, errs field.ErrorList, fieldPath, detail string) {
	t.Helper()
	if fieldPath == "" {
		if len(errs) > 0 {
			t.Fatalf("want valid, got %v", errs)
		}
		return
	}
	for _, e := range errs {
		if e.Field == fieldPath && strings.Contains(e.Error(), detail) {
			return
		}
	}
	t.Fatalf("want an error on %s with %q, got %v", fieldPath, detail, errs)
}

func TestIngressesAreValidatedAsKubernetesDoes(t *testing.T) {
	tests := []struct {
		name   string
		change func(ing *networkingv1.Ingress)
		field  string
		detail string
	}{
		{"the conformance spec's ingress is valid", func(*networkingv1.Ingress) {}, "", ""},
		{"an ingress routes something", func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend, ing.Spec.Rules = nil, nil },
			"spec", "either `defaultBackend` or `rules` must be specified"},
		{"a host is not an IP", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "10.0.0.1" },
			"spec.rules[0].host", "must be a DNS name, not an IP address"},
		{"a wildcard host is one label of *", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "foo.*.com" },
			"spec.rules[0].host", "a wildcard DNS-1123 subdomain must start with '*.'"},
		{"*.example.com is a valid host", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "*.example.com" }, "", ""},
		{"a path says how it matches", func(ing *networkingv1.Ingress) { firstPath(ing).PathType = nil },
			"spec.rules[0].http.paths[0].pathType", "pathType must be specified"},
		{"an unknown path type", func(ing *networkingv1.Ingress) { firstPath(ing).PathType = ptr.To(networkingv1.PathType("Regex")) },
			"spec.rules[0].http.paths[0].pathType", `Unsupported value: "Regex"`},
		{"a Prefix path is absolute", func(ing *networkingv1.Ingress) { firstPath(ing).Path = "api" },
			"spec.rules[0].http.paths[0].path", "must be an absolute path"},
		{"a Prefix path is normalised", func(ing *networkingv1.Ingress) { firstPath(ing).Path = "/api//v1" },
			"spec.rules[0].http.paths[0].path", "must not contain '//'"},
		{"an ImplementationSpecific path may be empty", func(ing *networkingv1.Ingress) {
			firstPath(ing).PathType, firstPath(ing).Path = ptr.To(networkingv1.PathTypeImplementationSpecific), ""
		}, "", ""},
		{"an http rule has paths", func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].HTTP.Paths = nil },
			"spec.rules[0].http.paths", "Required value"},
		{"a backend names a port", func(ing *networkingv1.Ingress) { firstPath(ing).Backend.Service.Port.Number = 0 },
			"spec.rules[0].http.paths[0].backend", "port name or number is required"},
		{"by name or by number, not both", func(ing *networkingv1.Ingress) { firstPath(ing).Backend.Service.Port.Name = "http" },
			"spec.rules[0].http.paths[0].backend", "cannot set both port name & port number"},
		{"a Service's name is a DNS label", func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend.Service.Name = "web.svc" },
			"spec.defaultBackend.service.name", "must not contain dots"},
		{"a Service name may start with a digit since RelaxedServiceNameValidation",
			func(ing *networkingv1.Ingress) { ing.Spec.DefaultBackend.Service.Name = "1web" }, "", ""},
		{"a backend is a service or a resource", func(ing *networkingv1.Ingress) {
			ing.Spec.DefaultBackend.Resource = &corev1.TypedLocalObjectReference{APIGroup: ptr.To("k8s.example.com"), Kind: "StorageBucket", Name: "static"}
		}, "spec.defaultBackend", "cannot set both resource and service backends"},
		{"a TLS secret has a valid name", func(ing *networkingv1.Ingress) {
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"foo.bar.com"}, SecretName: "Web_TLS"}}
		}, "spec.tls[0].secretName", "a lowercase RFC 1123 subdomain"},
		{"the class is a DNS subdomain", func(ing *networkingv1.Ingress) { ing.Spec.IngressClassName = ptr.To("Nginx") },
			"spec.ingressClassName", "a lowercase RFC 1123 subdomain"},
		{"the class annotation and field agree", func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{"kubernetes.io/ingress.class": "traefik"}
			ing.Spec.IngressClassName = ptr.To("nginx")
		}, "annotations.kubernetes.io/ingress.class", "must match `ingressClassName` when both are specified"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ing := validIngress()
			tc.change(ing)
			expect(t, validateIngress(ing, nil), tc.field, tc.detail)
		})
	}
}

func TestAnUpdateKeepsWhatAnOlderKubernetesLetIn(t *testing.T) {
	old := validIngress()
	old.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "Web_TLS"}}
	next := old.DeepCopy()
	next.Annotations = map[string]string{"team": "web"}
	expect(t, validateIngress(next, old), "", "")
	expect(t, validateIngress(next, nil), "spec.tls[0].secretName", "a lowercase RFC 1123 subdomain")
}

func TestIngressClassesAreValidatedAsKubernetesDoes(t *testing.T) {
	valid := func() *networkingv1.IngressClass {
		ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{
			Controller: "example.com/controller",
			Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("example.com"), Kind: "FooKind", Name: "foo"}}}
		IngressClasses.Default(ic)
		return ic
	}
	tests := []struct {
		name   string
		change func(ic *networkingv1.IngressClass)
		old    func(ic *networkingv1.IngressClass) // nil: a create
		field  string
		detail string
	}{
		{"parameters default to the cluster's", func(ic *networkingv1.IngressClass) {
			if ptr.Deref(ic.Spec.Parameters.Scope, "") != "Cluster" {
				t.Errorf("scope %v, want Cluster", ic.Spec.Parameters.Scope)
			}
		}, nil, "", ""},
		{"a controller is required", func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "" }, nil,
			"spec.controller", "Required value"},
		{"a controller is domain-prefixed", func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "nginx" }, nil,
			"spec.controller", `must be a domain-prefixed path (such as "acme.io/foo")`},
		{"parameters name their kind", func(ic *networkingv1.IngressClass) { ic.Spec.Parameters.Kind = "" }, nil,
			"spec.parameters.kind", "Required value"},
		{"namespaced parameters name their namespace", func(ic *networkingv1.IngressClass) {
			ic.Spec.Parameters.Scope = ptr.To("Namespace")
		}, nil, "spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'"},
		{"the conformance spec's namespaced parameters are valid", func(ic *networkingv1.IngressClass) {
			ic.Spec.Parameters.Scope, ic.Spec.Parameters.Namespace = ptr.To("Namespace"), ptr.To("foo-ns")
		}, nil, "", ""},
		{"cluster parameters have no namespace", func(ic *networkingv1.IngressClass) {
			ic.Spec.Parameters.Namespace = ptr.To("foo-ns")
		}, nil, "spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'"},
		{"an unknown scope", func(ic *networkingv1.IngressClass) { ic.Spec.Parameters.Scope = ptr.To("Node") }, nil,
			"spec.parameters.scope", `Unsupported value: "Node"`},
		{"the controller is fixed once created", func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "example.com/other" },
			func(*networkingv1.IngressClass) {}, "spec.controller", "field is immutable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ic := valid()
			var old runtime.Object
			if tc.old != nil {
				prev := valid()
				tc.old(prev)
				old = prev
			}
			tc.change(ic)
			expect(t, validateIngressClass(ic, old), tc.field, tc.detail)
		})
	}
}

func TestServiceCIDRsAreValidatedAsKubernetesDoes(t *testing.T) {
	cidr := func(cidrs ...string) *networkingv1.ServiceCIDR {
		return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	}
	tests := []struct {
		name      string
		obj, old  *networkingv1.ServiceCIDR
		fieldPath string
		detail    string
	}{
		{"one range is valid", cidr("10.96.0.0/12"), nil, "", ""},
		{"one of each family is valid", cidr("10.96.0.0/12", "fd00:10:96::/112"), nil, "", ""},
		{"a range is required", cidr(), nil, "spec.cidrs", "at least one CIDR required"},
		{"at most two", cidr("10.0.0.0/24", "fd00::/112", "10.1.0.0/24"), nil, "spec.cidrs", "may only hold up to 2 values"},
		{"two of one family", cidr("10.0.0.0/24", "10.1.0.0/24"), nil, "spec.cidrs", "may specify no more than one IP for each IP family"},
		{"a range has no bits set past its prefix", cidr("10.96.0.1/12"), nil, "spec.cidrs[0]", "must not have bits set beyond the prefix length"},
		{"a range is written in canonical form", cidr("fd00:0::/112"), nil, "spec.cidrs[0]", `must be in canonical form ("fd00::/112")`},
		{"the range is fixed once created", cidr("10.100.0.0/16"), cidr("10.96.0.0/12"), "spec.cidrs[0]", "field is immutable"},
		{"a single-stack range may become dual-stack", cidr("10.96.0.0/12", "fd00::/112"), cidr("10.96.0.0/12"), "", ""},
		{"but not lose a family", cidr("10.96.0.0/12"), cidr("10.96.0.0/12", "fd00::/112"), "spec.cidrs", "field is immutable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			expect(t, validateServiceCIDR(tc.obj, old), tc.fieldPath, tc.detail)
		})
	}
}

func TestIPAddressesAreValidatedAsKubernetesDoes(t *testing.T) {
	ref := func() *networkingv1.ParentReference {
		return &networkingv1.ParentReference{Group: "mygroup", Resource: "myresources", Namespace: "foo", Name: "bar"}
	}
	names := []struct {
		name, ip, detail string
	}{
		{"an IPv4 address is a name", "255.255.255.255", ""},
		{"so is an IPv6 address in canonical form", "fe80::42:1dff:fe84:f9e2", ""},
		{"but not in another form", "fe80:0::1", `must be in canonical form ("fe80::1")`},
		{"a name that is no IP", "web", "must be a valid IP address"},
	}
	for _, tc := range names {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(ipAddressName(tc.ip, false), "; ")
			if (tc.detail == "") != (got == "") || !strings.Contains(got, tc.detail) {
				t.Fatalf("got %q, want %q", got, tc.detail)
			}
		})
	}
	tests := []struct {
		name      string
		ref       func(r *networkingv1.ParentReference) *networkingv1.ParentReference
		old       bool
		fieldPath string
		detail    string
	}{
		{"the conformance spec's parent is valid", func(r *networkingv1.ParentReference) *networkingv1.ParentReference { return r }, false, "", ""},
		{"a Service's group is the empty core group", func(r *networkingv1.ParentReference) *networkingv1.ParentReference {
			r.Group = ""
			return r
		}, false, "", ""},
		{"a parent is required", func(*networkingv1.ParentReference) *networkingv1.ParentReference { return nil }, false,
			"spec.parentRef", "Required value"},
		{"the parent's resource is required", func(r *networkingv1.ParentReference) *networkingv1.ParentReference {
			r.Resource = ""
			return r
		}, false, "spec.parentRef.resource", "Required value"},
		{"the parent is fixed once created", func(r *networkingv1.ParentReference) *networkingv1.ParentReference {
			r.Name = "other"
			return r
		}, true, "spec.parentRef", "field is immutable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ip := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.96.0.10"}, Spec: networkingv1.IPAddressSpec{ParentRef: tc.ref(ref())}}
			var old runtime.Object
			if tc.old {
				old = &networkingv1.IPAddress{ObjectMeta: ip.ObjectMeta, Spec: networkingv1.IPAddressSpec{ParentRef: ref()}}
			}
			expect(t, validateIPAddress(ip, old), tc.fieldPath, tc.detail)
		})
	}
}
