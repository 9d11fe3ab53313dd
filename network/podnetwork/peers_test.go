package podnetwork

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRoutesOfANode(t *testing.T) {
	node := func(peer, podCIDR string, podCIDRs ...string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node02"}, Spec: corev1.NodeSpec{PodCIDR: podCIDR, PodCIDRs: podCIDRs}}
		SetPeerAnnotation(n, peer)
		return n
	}
	tests := []struct {
		name string
		node *corev1.Node
		want []string
	}{
		{"its pod CIDRs via its peer", node("node02-runtime:10011", "10.244.2.0/24", "10.244.2.0/24"), []string{"10.244.2.0/24 via node02-runtime:10011"}},
		{"podCIDR alone, as an old Node has it", node("node02-runtime:10011", "10.244.2.0/24"), []string{"10.244.2.0/24 via node02-runtime:10011"}},
		{"no peer: its pods are its own node's only", node("", "10.244.2.0/24", "10.244.2.0/24"), nil},
		{"no pod CIDR yet", node("node02-runtime:10011", ""), []string{}},
	}
	for _, tc := range tests {
		if got := routesOf(tc.node); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
