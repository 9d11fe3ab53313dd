package networking_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/apiserver/registry/networking"
	"github.com/mkube/mkube/internal/testserver"
)

const (
	ingressesPath   = "/apis/networking.k8s.io/v1/namespaces/default/ingresses"
	classesPath     = "/apis/networking.k8s.io/v1/ingressclasses"
	serviceCIDRPath = "/apis/networking.k8s.io/v1/servicecidrs"
	ipAddressesPath = "/apis/networking.k8s.io/v1/ipaddresses"
)

func TestAnIngressGetsTheDefaultClassAndItsControllerWritesTheStatus(t *testing.T) {
	s := testserver.StartServer(t)
	classes := []string{
		`{"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","metadata":{"name":"nginx","annotations":{"ingressclass.kubernetes.io/is-default-class":"true"}},"spec":{"controller":"k8s.io/ingress-nginx","parameters":{"apiGroup":"k8s.example.com","kind":"IngressParameters","name":"external-lb"}}}`,
		`{"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","metadata":{"name":"traefik"},"spec":{"controller":"traefik.io/ingress-controller"}}`,
	}
	for _, body := range classes {
		if code := s.Do(http.MethodPost, classesPath, "application/json", body, nil); code != http.StatusCreated {
			t.Fatalf("create class: %d", code)
		}
	}
	cols, rows := testserver.TableOf(t, s, classesPath)
	if cols != "Name Controller Parameters Age" || len(rows) != 2 || rows[0][0] != "nginx (default)" ||
		rows[0][2] != "IngressParameters.k8s.example.com/external-lb" || rows[1][2] != "<none>" {
		t.Fatalf("kubectl get ingressclass: %s %v", cols, rows)
	}

	var ing networkingv1.Ingress
	body := `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"web"},"spec":{"rules":[{"host":"web.example.com","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]}}`
	if code := s.Do(http.MethodPost, ingressesPath, "application/json", body, &ing); code != http.StatusCreated {
		t.Fatalf("create ingress: %d", code)
	}
	if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" {
		t.Fatalf("DefaultIngressClass: ingressClassName %v, want nginx", ing.Spec.IngressClassName)
	}

	// The controller reports its address; a status patch may change
	// annotations too (the conformance spec's "patching /status").
	patch := `{"metadata":{"annotations":{"patchedstatus":"true"}},"status":{"loadBalancer":{"ingress":[{"ip":"169.1.1.1"}]}},"spec":{"rules":null}}`
	if code := s.Do(http.MethodPatch, ingressesPath+"/web/status", "application/merge-patch+json", patch, &ing); code != http.StatusOK {
		t.Fatalf("patch status: %d", code)
	}
	if ing.Annotations["patchedstatus"] != "true" || len(ing.Status.LoadBalancer.Ingress) != 1 || len(ing.Spec.Rules) != 1 {
		t.Fatalf("after the status patch: annotations %v, status %v, rules %d (the spec is kept)",
			ing.Annotations, ing.Status.LoadBalancer, len(ing.Spec.Rules))
	}
	cols, rows = testserver.TableOf(t, s, ingressesPath)
	if cols != "Name Class Hosts Address Ports Age" || len(rows) != 1 {
		t.Fatalf("kubectl get ingress: %s %v", cols, rows)
	}
	if r := rows[0]; r[1] != "nginx" || r[2] != "web.example.com" || r[3] != "169.1.1.1" || r[4] != "80" {
		t.Fatalf("kubectl get ingress: %v", r)
	}

	var st metav1.Status
	bad := `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"bad"},"spec":{"ingressClassName":"nginx"}}`
	if code := s.Do(http.MethodPost, ingressesPath, "application/json", bad, &st); code != http.StatusUnprocessableEntity ||
		!strings.Contains(st.Message, "spec: Invalid value: null: either `defaultBackend` or `rules` must be specified") {
		t.Fatalf("an ingress that routes nothing: %d %s", code, st.Message)
	}
}

func TestTheDefaultServiceCIDRHoldsTheServicesClusterIPs(t *testing.T) {
	s := testserver.StartServer(t)
	var sc networkingv1.ServiceCIDR
	if code := s.Do(http.MethodGet, serviceCIDRPath+"/kubernetes", "", "", &sc); code != http.StatusOK {
		t.Fatalf("get servicecidr kubernetes: %d", code)
	}
	_, cidr, err := net.ParseCIDR(sc.Spec.CIDRs[0])
	if err != nil || sc.Spec.CIDRs[0] != networking.ServiceClusterIPRange {
		t.Fatalf("cidrs %v: %v", sc.Spec.CIDRs, err)
	}
	var svc corev1.Service
	body := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`
	if code := s.Do(http.MethodPost, "/api/v1/namespaces/default/services", "application/json", body, &svc); code != http.StatusCreated {
		t.Fatalf("create service: %d", code)
	}
	if !cidr.Contains(net.ParseIP(svc.Spec.ClusterIP)) {
		t.Fatalf("the Service got %s, outside the default ServiceCIDR %s", svc.Spec.ClusterIP, cidr)
	}
	cols, rows := testserver.TableOf(t, s, serviceCIDRPath)
	if cols != "Name CIDRs Age" || len(rows) != 1 || rows[0][1] != networking.ServiceClusterIPRange {
		t.Fatalf("kubectl get servicecidr: %s %v", cols, rows)
	}
}

func TestIPAddressesAreNamedByTheirAddress(t *testing.T) {
	s := testserver.StartServer(t)
	body := `{"apiVersion":"networking.k8s.io/v1","kind":"IPAddress","metadata":{"name":"fe80::42:1dff:fe84:f9e2"},"spec":{"parentRef":{"group":"mygroup","resource":"myresources","namespace":"foo","name":"bar"}}}`
	if code := s.Do(http.MethodPost, ipAddressesPath, "application/json", body, nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	cols, rows := testserver.TableOf(t, s, ipAddressesPath)
	if cols != "Name ParentRef" || len(rows) != 1 || rows[0][0] != "fe80::42:1dff:fe84:f9e2" || rows[0][1] != "myresources.mygroup/foo/bar" {
		t.Fatalf("kubectl get ipaddress: %s %v", cols, rows)
	}
	var st metav1.Status
	bad := `{"apiVersion":"networking.k8s.io/v1","kind":"IPAddress","metadata":{"name":"fe80:0::1"},"spec":{"parentRef":{"resource":"services","name":"web"}}}`
	if code := s.Do(http.MethodPost, ipAddressesPath, "application/json", bad, &st); code != http.StatusUnprocessableEntity ||
		!strings.Contains(st.Message, `metadata.name: Invalid value: "fe80:0::1": must be in canonical form ("fe80::1")`) {
		t.Fatalf("a name not in canonical form: %d %s", code, st.Message)
	}
}
