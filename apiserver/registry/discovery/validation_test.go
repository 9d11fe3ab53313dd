package discovery

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// validSlice is what the EndpointSlice controller writes for one pod.
func validSlice() *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-abcde", Namespace: "default"},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.2"}, NodeName: ptr.To("node01"),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

func TestEndpointSlicesAreValidatedAsKubernetesDoes(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *discoveryv1.EndpointSlice)
		field  string // "" when valid
		detail string // a part of the error's message
	}{
		{"the controller's slice is valid", func(*discoveryv1.EndpointSlice) {}, "", ""},
		{"a placeholder slice with no endpoints and no ports is valid", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints, s.Ports = []discoveryv1.Endpoint{}, []discoveryv1.EndpointPort{}
		}, "", ""},
		{"an address type is required", func(s *discoveryv1.EndpointSlice) { s.AddressType = "" },
			"addressType", "Required value"},
		{"the deprecated type IP is not accepted", func(s *discoveryv1.EndpointSlice) { s.AddressType = "IP" },
			"addressType", `Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"`},
		{"an endpoint needs an address", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses = nil },
			"endpoints[0].addresses", "must contain at least 1 address"},
		{"an endpoint has at most 100 addresses", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Addresses = nil
			for i := range 101 {
				s.Endpoints[0].Addresses = append(s.Endpoints[0].Addresses, fmt.Sprintf("10.0.%d.%d", i/200, i%200+1))
			}
		}, "endpoints[0].addresses", "must have at most 100 items"},
		{"a slice has at most 1000 endpoints", func(s *discoveryv1.EndpointSlice) {
			for len(s.Endpoints) <= 1000 {
				s.Endpoints = append(s.Endpoints, s.Endpoints[0])
			}
		}, "endpoints", "must have at most 1000 items"},
		{"an IPv4 slice holds IPv4 addresses", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses[0] = "fd00::1" },
			"endpoints[0].addresses[0]", "must be a valid IPv4 address"},
		{"an IPv6 slice holds IPv6 addresses", func(s *discoveryv1.EndpointSlice) { s.AddressType = discoveryv1.AddressTypeIPv6 },
			"endpoints[0].addresses[0]", "must be a valid IPv6 address"},
		{"an IPv6 slice accepts an IPv6 address", func(s *discoveryv1.EndpointSlice) {
			s.AddressType, s.Endpoints[0].Addresses[0] = discoveryv1.AddressTypeIPv6, "fd00:10:244::2"
		}, "", ""},
		{"a loopback address is no endpoint", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses[0] = "127.0.0.1" },
			"endpoints[0].addresses[0]", "may not be in the loopback range (127.0.0.0/8, ::1/128)"},
		{"nor a link-local one", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses[0] = "169.254.169.254" },
			"endpoints[0].addresses[0]", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"},
		{"nor the unspecified one", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses[0] = "0.0.0.0" },
			"endpoints[0].addresses[0]", "may not be unspecified (0.0.0.0)"},
		{"an FQDN slice holds domain names", func(s *discoveryv1.EndpointSlice) {
			s.AddressType, s.Endpoints[0].Addresses[0] = discoveryv1.AddressTypeFQDN, "localhost"
		}, "endpoints[0].addresses[0]", "should be a domain with at least two segments separated by dots"},
		{"a node name is a DNS subdomain", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].NodeName = ptr.To("Node_01") },
			"endpoints[0].nodeName", "a lowercase RFC 1123 subdomain"},
		{"a hostname is a DNS label", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Hostname = ptr.To("Web-1") },
			"endpoints[0].hostname", "a lowercase RFC 1123 label"},
		{"a zone hint is named once", func(s *discoveryv1.EndpointSlice) {
			s.Endpoints[0].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "a"}, {Name: "a"}}}
		}, "endpoints[0].hints.forZones[1].name", `Duplicate value: "a"`},
		{"a slice has at most 20000 ports", func(s *discoveryv1.EndpointSlice) {
			for i := range 20000 {
				s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(fmt.Sprint("p", i)), Protocol: ptr.To(corev1.ProtocolTCP)})
			}
		}, "ports", "must have at most 20000 items"},
		{"port names are unique", func(s *discoveryv1.EndpointSlice) { s.Ports = append(s.Ports, s.Ports[0]) },
			"ports[1].name", `Duplicate value: "http"`},
		{"so is the empty name", func(s *discoveryv1.EndpointSlice) {
			s.Ports = []discoveryv1.EndpointPort{{Name: ptr.To(""), Protocol: ptr.To(corev1.ProtocolTCP)}, {Name: ptr.To(""), Protocol: ptr.To(corev1.ProtocolUDP)}}
		}, "ports[1].name", `Duplicate value: ""`},
		{"a port name is a DNS label", func(s *discoveryv1.EndpointSlice) { s.Ports[0].Name = ptr.To("HTTP") },
			"ports[0].name", "a lowercase RFC 1123 label"},
		{"a port's protocol is TCP, UDP or SCTP", func(s *discoveryv1.EndpointSlice) { s.Ports[0].Protocol = ptr.To[corev1.Protocol]("ICMP") },
			"ports[0].protocol", `Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`},
		{"an appProtocol is a qualified name", func(s *discoveryv1.EndpointSlice) { s.Ports[0].AppProtocol = ptr.To("kubernetes.io/h2c!") },
			"ports[0].appProtocol", "must consist of alphanumeric characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSlice()
			tc.change(s)
			errs := validateEndpointSlice(s, nil)
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Error(), tc.detail) {
				t.Fatalf("want one error on %s containing %q, got %v", tc.field, tc.detail, errs)
			}
		})
	}
}

func TestAnEndpointSliceUpdateKeepsItsAddressTypeAndTrustsUnchangedEndpoints(t *testing.T) {
	old := validSlice()
	old.Endpoints[0].Addresses[0] = "127.0.0.1" // stored before the rule existed, say
	tests := []struct {
		name   string
		change func(s *discoveryv1.EndpointSlice)
		want   string // the error, "" for none
	}{
		{"a new port is accepted with the old endpoints as they are", func(s *discoveryv1.EndpointSlice) {
			s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To("metrics"), Port: ptr.To[int32](9090), Protocol: ptr.To(corev1.ProtocolTCP)})
		}, ""},
		{"the address type is immutable", func(s *discoveryv1.EndpointSlice) { s.AddressType = discoveryv1.AddressTypeFQDN },
			"addressType: Invalid value: \"FQDN\": field is immutable"},
		{"changed endpoints are checked again", func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Addresses[0] = "127.0.0.2" },
			"endpoints[0].addresses[0]: Invalid value: \"127.0.0.2\": may not be in the loopback range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := old.DeepCopy()
			tc.change(s)
			errs := validateEndpointSlice(s, old)
			got := errs.ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("want valid, got %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("want %q, got %v", tc.want, got)
			}
		})
	}
}

func TestAnEndpointSlicesPortsAreDefaultedToAnEmptyNameAndTCP(t *testing.T) {
	s := validSlice()
	s.Ports = []discoveryv1.EndpointPort{{Port: ptr.To[int32](53), Protocol: ptr.To(corev1.ProtocolUDP)}, {Port: ptr.To[int32](80)}}
	s.Endpoints[0].DeprecatedTopology = map[string]string{"rack": "r1"}
	defaultEndpointSlice(s)
	if got := fmt.Sprintf("%q/%s %q/%s", *s.Ports[0].Name, *s.Ports[0].Protocol, *s.Ports[1].Name, *s.Ports[1].Protocol); got != `""/UDP ""/TCP` {
		t.Errorf("ports defaulted to %s, want \"\"/UDP \"\"/TCP", got)
	}
	if s.Endpoints[0].DeprecatedTopology != nil {
		t.Errorf("deprecatedTopology kept on a v1 write: %v", s.Endpoints[0].DeprecatedTopology)
	}
}
