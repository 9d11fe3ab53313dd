package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// An Endpoints' addresses are ones a Service proxy can send clients to,
// its ports numbered, of a known protocol and named when several, in
// Kubernetes' words.
func TestEndpointsValidation(t *testing.T) {
	good := func() *corev1.Endpoints {
		return &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{
			Addresses:         []corev1.EndpointAddress{{IP: "10.244.1.5"}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.244.2.7"}},
			Ports:             []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}},
		}}}
	}
	for _, tc := range []struct {
		name   string
		change func(*corev1.Endpoints)
		want   string // "" is valid
	}{
		{"valid", func(*corev1.Endpoints) {}, ""},
		{"loopback", func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].IP = "127.0.0.1" },
			`subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`},
		{"link-local, not ready", func(e *corev1.Endpoints) { e.Subsets[0].NotReadyAddresses[0].IP = "169.254.169.254" },
			`subsets[0].notReadyAddresses[0].ip: Invalid value: "169.254.169.254": may not be in the link-local range (169.254.0.0/16, fe80::/10)`},
		{"not an IP", func(e *corev1.Endpoints) { e.Subsets[0].Addresses[0].IP = "web" },
			`subsets[0].addresses[0].ip: Invalid value: "web": must be a valid IP address`},
		{"no addresses", func(e *corev1.Endpoints) { e.Subsets[0].Addresses, e.Subsets[0].NotReadyAddresses = nil, nil },
			"subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"},
		{"an unnamed port among two", func(e *corev1.Endpoints) { e.Subsets[0].Ports[1].Name = "" }, "subsets[0].ports[1].name: Required value"},
		{"port 0", func(e *corev1.Endpoints) { e.Subsets[0].Ports[0].Port = 0 }, "subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"},
		{"an unknown protocol", func(e *corev1.Endpoints) { e.Subsets[0].Ports[0].Protocol = "QUIC" },
			`subsets[0].ports[0].protocol: Unsupported value: "QUIC": supported values: "TCP", "UDP", "SCTP"`},
	} {
		ep := good()
		tc.change(ep)
		errs := validateEndpoints(ep)
		if got := errs.ToAggregate(); (tc.want == "") != (got == nil) || (got != nil && !strings.Contains(got.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, got, tc.want)
		}
	}
}
