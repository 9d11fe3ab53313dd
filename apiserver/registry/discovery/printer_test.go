package discovery

import (
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestKubectlGetEndpointSlicesPrintsKubernetesCells(t *testing.T) {
	ep := func(addrs ...string) discoveryv1.Endpoint { return discoveryv1.Endpoint{Addresses: addrs} }
	port := func(n int32) discoveryv1.EndpointPort { return discoveryv1.EndpointPort{Port: ptr.To(n)} }
	tests := []struct {
		name             string
		slice            discoveryv1.EndpointSlice
		ports, endpoints string
	}{
		{"a placeholder slice shows <unset> for both", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4},
			"<unset>", "<unset>"},
		{"two ports and two endpoints are listed", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{port(80), port(443)}, Endpoints: []discoveryv1.Endpoint{ep("10.0.0.1"), ep("10.0.0.2")}},
			"80,443", "10.0.0.1,10.0.0.2"},
		{"past three, the rest is counted, across endpoints' addresses", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{port(1), port(2), port(3), port(4)},
			Endpoints: []discoveryv1.Endpoint{ep("10.0.0.1", "10.0.0.2"), ep("10.0.0.3"), ep("10.0.0.4"), ep("10.0.0.5")}},
			"1,2,3 + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."},
		{"a port without a number shows its name, or *", discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeFQDN,
			Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http")}, {}}, Endpoints: []discoveryv1.Endpoint{ep("web.example.com")}},
			"http,*", "web.example.com"},
	}
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.slice.CreationTimestamp = metav1.NewTime(now.Add(-90 * time.Second))
			cells := EndpointSlices.Row(&tc.slice, now)
			want := []any{string(tc.slice.AddressType), tc.ports, tc.endpoints, "90s"}
			if len(cells) != len(want) || len(EndpointSlices.Columns) != len(want) {
				t.Fatalf("cells %v for columns %v", cells, EndpointSlices.Columns)
			}
			for i := range want {
				if cells[i] != want[i] {
					t.Errorf("%s: got %q, want %q", EndpointSlices.Columns[i].Name, cells[i], want[i])
				}
			}
		})
	}
}
