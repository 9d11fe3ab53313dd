package networking

import (
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKubectlGetIngressPrintsKubernetesCells(t *testing.T) {
	rule := func(host string) networkingv1.IngressRule { return networkingv1.IngressRule{Host: host} }
	lb := func(addrs ...networkingv1.IngressLoadBalancerIngress) networkingv1.IngressStatus {
		return networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: addrs}}
	}
	tests := []struct {
		name                        string
		spec                        networkingv1.IngressSpec
		status                      networkingv1.IngressStatus
		class, hosts, address, port string
	}{
		{"a default backend alone matches every host, and no controller reported yet", networkingv1.IngressSpec{},
			networkingv1.IngressStatus{}, "<none>", "*", "", "80"},
		{"past three hosts the rest are counted", networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{
			rule("a.example.com"), rule("b.example.com"), rule(""), rule("c.example.com"), rule("d.example.com")}},
			networkingv1.IngressStatus{}, "<none>", "a.example.com,b.example.com,c.example.com + 2 more...", "", "80"},
		{"rules without a host are not counted until three hosts are shown", networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{
			rule("a.example.com"), rule(""), rule(""), rule("b.example.com")}},
			networkingv1.IngressStatus{}, "<none>", "a.example.com,b.example.com", "", "80"},
		{"IPs, or hostnames without one, sorted, and a TLS section opens 443", networkingv1.IngressSpec{
			TLS: []networkingv1.IngressTLS{{SecretName: "web-tls"}}},
			lb(networkingv1.IngressLoadBalancerIngress{IP: "10.0.0.2"}, networkingv1.IngressLoadBalancerIngress{Hostname: "lb"}),
			"<none>", "*", "10.0.0.2,lb", "80, 443"},
		{"a long address is cut as kubectl cuts it", networkingv1.IngressSpec{},
			lb(networkingv1.IngressLoadBalancerIngress{IP: "10.0.0.21"}, networkingv1.IngressLoadBalancerIngress{IP: "10.0.0.22"}),
			"<none>", "*", "10.0.0.21,10....", "80"},
	}
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))},
				Spec: tc.spec, Status: tc.status}
			got := Ingresses.Row(ing, now)
			want := []any{tc.class, tc.hosts, tc.address, tc.port, "60s"}
			if len(got) != len(want) || len(Ingresses.Columns) != len(want) {
				t.Fatalf("cells %v for columns %v", got, Ingresses.Columns)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s: got %q, want %q", Ingresses.Columns[i].Name, got[i], want[i])
				}
			}
		})
	}
}
