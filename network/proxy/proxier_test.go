package proxy

import (
	"testing"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/proto/runtimev1"
)

// A Service's rules: each port's ready endpoints at the slice's port of
// the same name, ClientIP affinity's timeout, and for DNS the ready
// endpoints with their hostnames (not-ready ones too if the Service
// publishes them).
func TestServiceRules(t *testing.T) {
	slice := func(name string, port int32, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
			Endpoints: eps}
	}
	ready := func(ip, hostname string) discoveryv1.Endpoint {
		ep := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}
		if hostname != "" {
			ep.Hostname = ptr.To(hostname)
		}
		return ep
	}
	notReady := discoveryv1.Endpoint{Addresses: []string{"10.244.1.9"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.20", ClusterIPs: []string{"10.96.0.20"},
		Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
			{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090}},
		SessionAffinity: corev1.ServiceAffinityClientIP}}
	headless := svc.DeepCopy()
	headless.Spec.ClusterIP, headless.Spec.ClusterIPs, headless.Spec.SessionAffinity = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}, ""
	headless.Spec.PublishNotReadyAddresses = true
	external := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}}

	tests := []struct {
		name   string
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		want   *runtimev1.Service
	}{
		{"ready endpoints of both slices, in the slices' order", svc,
			[]*discoveryv1.EndpointSlice{slice("web-b", 8081, ready("10.244.2.5", "")), slice("web-a", 8080, ready("10.244.1.5", ""), notReady)},
			&runtimev1.Service{Namespace: "default", Name: "web", ClusterIps: []string{"10.96.0.20"}, AffinityTimeoutSeconds: 10800,
				Ports: []*runtimev1.ServicePort{
					{Name: "http", Protocol: "TCP", Port: 80, NodePort: 30080, Backends: []string{"10.244.1.5:8080", "10.244.2.5:8081"}},
					{Name: "metrics", Protocol: "TCP", Port: 9090}},
				Endpoints: []*runtimev1.Endpoint{{Ip: "10.244.1.5"}, {Ip: "10.244.2.5"}}}},
		{"headless, publishing its not-ready endpoints", headless,
			[]*discoveryv1.EndpointSlice{slice("web-a", 8080, ready("10.244.1.5", "web-0"), notReady)},
			&runtimev1.Service{Namespace: "default", Name: "web",
				Ports: []*runtimev1.ServicePort{
					{Name: "http", Protocol: "TCP", Port: 80, NodePort: 30080, Backends: []string{"10.244.1.5:8080"}},
					{Name: "metrics", Protocol: "TCP", Port: 9090}},
				Endpoints: []*runtimev1.Endpoint{{Ip: "10.244.1.5", Hostname: "web-0"}, {Ip: "10.244.1.9"}}}},
		{"ExternalName", external, nil, &runtimev1.Service{Namespace: "default", Name: "db", ExternalName: "db.example.com"}},
	}
	for _, tc := range tests {
		if got := serviceRules(tc.svc, tc.slices); !proto.Equal(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, got, tc.want)
		}
	}
}
