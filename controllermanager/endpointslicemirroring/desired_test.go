package endpointslicemirroring

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDesiredSlicesMirrorAnEndpoints(t *testing.T) {
	ports := func(ps ...int32) []corev1.EndpointPort {
		var out []corev1.EndpointPort
		for _, p := range ps {
			out = append(out, corev1.EndpointPort{Port: p})
		}
		return out
	}
	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	tests := []struct {
		name    string
		subsets []corev1.EndpointSubset
		want    map[string]string // slice key → its addresses and readiness
	}{
		{"one subset is one slice", []corev1.EndpointSubset{{Ports: ports(80), Addresses: addrs("10.1.2.3")}},
			map[string]string{":80/TCP/IPv4": "10.1.2.3+"}},
		{"not-ready addresses are endpoints not ready",
			[]corev1.EndpointSubset{{Ports: ports(80), Addresses: addrs("10.1.2.3"), NotReadyAddresses: addrs("10.1.2.4")}},
			map[string]string{":80/TCP/IPv4": "10.1.2.3+ 10.1.2.4-"}},
		{"subsets with the same ports share a slice",
			[]corev1.EndpointSubset{{Ports: ports(80), Addresses: addrs("10.0.0.1")}, {Ports: ports(80), Addresses: addrs("10.0.0.2")}},
			map[string]string{":80/TCP/IPv4": "10.0.0.1+ 10.0.0.2+"}},
		{"other ports, another slice; each family its own",
			[]corev1.EndpointSubset{{Ports: ports(80), Addresses: addrs("10.0.0.1", "fd00::1")}, {Ports: ports(443), Addresses: addrs("10.0.0.2")}},
			map[string]string{":80/TCP/IPv4": "10.0.0.1+", ":80/TCP/IPv6": "fd00::1+", ":443/TCP/IPv4": "10.0.0.2+"}},
		{"what is no IP is not mirrored", []corev1.EndpointSubset{{Ports: ports(80), Addresses: addrs("db.example.com")}}, map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", UID: "u1",
				Labels: map[string]string{"team": "data"}, Annotations: map[string]string{corev1.EndpointsLastChangeTriggerTime: "x"}},
				Subsets: tc.subsets}
			got := map[string]string{}
			for _, d := range desiredSlices(ep) {
				s := d.slice
				if d.key != keyOf(s) {
					t.Errorf("key %q, but the slice's own is %q", d.key, keyOf(s))
				}
				if s.Labels[discoveryv1.LabelServiceName] != "db" || s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || s.Labels["team"] != "data" {
					t.Errorf("labels %v", s.Labels)
				}
				if _, ok := s.Annotations[corev1.EndpointsLastChangeTriggerTime]; ok || s.GenerateName != "db-" ||
					len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "Endpoints" || s.OwnerReferences[0].UID != "u1" {
					t.Errorf("slice meta %+v", s.ObjectMeta)
				}
				var desc string
				for _, e := range s.Endpoints {
					mark := "-"
					if *e.Conditions.Ready {
						mark = "+"
					}
					if desc != "" {
						desc += " "
					}
					desc += e.Addresses[0] + mark
				}
				got[d.key] = desc
			}
			if len(got) != len(tc.want) {
				t.Fatalf("slices %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("slice %s: %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}
