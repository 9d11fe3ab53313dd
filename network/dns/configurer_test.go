package dns

import (
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client/record"
)

func TestPodDNS(t *testing.T) {
	root := t.TempDir()
	resolv := filepath.Join(root, "node01", "etc", "resolv.conf")
	if err := os.MkdirAll(filepath.Dir(resolv), 0o755); err != nil {
		t.Fatal(err)
	}
	node := "# the node's\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nsearch old.example\nsearch corp.example. .\noptions ndots:1 edns0\n"
	if err := os.WriteFile(resolv, []byte(node), 0o644); err != nil {
		t.Fatal(err)
	}
	discard := slog.New(slog.DiscardHandler)
	newConfigurer := func(clusterDNS ...netip.Addr) *Configurer {
		return &Configurer{Recorder: record.New(nil, "kubelet", "node01", discard), ClusterDNS: clusterDNS, ClusterDomain: DefaultClusterDomain,
			NodeResolvConf: func() ([]byte, error) { return os.ReadFile(resolv) }}
	}
	withDNS := newConfigurer(DefaultClusterDNS)
	podOf := func(policy corev1.DNSPolicy, hostNetwork bool, dc *corev1.PodDNSConfig) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
			Spec: corev1.PodSpec{DNSPolicy: policy, HostNetwork: hostNetwork, DNSConfig: dc}}
	}
	clusterSearch := []string{"shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}
	nodeDNS := &runtimeapi.DNSConfig{Servers: []string{"10.0.0.2", "10.0.0.3"}, Searches: []string{"corp.example"}, Options: []string{"ndots:1", "edns0"}}
	tests := []struct {
		name string
		c    *Configurer
		pod  *corev1.Pod
		want *runtimeapi.DNSConfig
	}{
		{"ClusterFirst names the cluster DNS, the namespace's search path then the node's, and ndots:5",
			withDNS, podOf(corev1.DNSClusterFirst, false, nil),
			&runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}}},
		{"Default is the node's resolv.conf: its nameservers, last search line without the root, options",
			withDNS, podOf(corev1.DNSDefault, false, nil), nodeDNS},
		{"a hostNetwork pod's ClusterFirst is the node's",
			withDNS, podOf(corev1.DNSClusterFirst, true, nil), nodeDNS},
		{"ClusterFirstWithHostNet keeps the cluster's on the node's network",
			withDNS, podOf(corev1.DNSClusterFirstWithHostNet, true, nil),
			&runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}}},
		{"a kubelet without cluster DNS falls back on the node's",
			newConfigurer(), podOf(corev1.DNSClusterFirst, false, nil), nodeDNS},
		{"None is the pod's dnsConfig alone",
			withDNS, podOf(corev1.DNSNone, false, &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"resolv.conf.local"}}),
			&runtimeapi.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"resolv.conf.local"}}},
		{"dnsConfig adds to the policy's, once each, and an option replaces the one of its name",
			withDNS, podOf(corev1.DNSClusterFirst, false, &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10", "1.1.1.1"},
				Searches: []string{"cluster.local", "extra.example"},
				Options:  []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "single-request"}}}),
			&runtimeapi.DNSConfig{Servers: []string{"10.96.0.10", "1.1.1.1"}, Searches: append(clusterSearch, "extra.example"),
				Options: []string{"ndots:2", "single-request"}}},
		{"only the first three nameservers are kept",
			withDNS, podOf(corev1.DNSNone, false, &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"}}),
			&runtimeapi.DNSConfig{Servers: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.PodDNS(tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Servers, tt.want.Servers) || !slices.Equal(got.Searches, tt.want.Searches) ||
				!slices.Equal(got.Options, tt.want.Options) {
				t.Errorf("PodDNS = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSearchesFitTheResolversLimits(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = "d" + strings.Repeat("x", 60)
	}
	tests := []struct {
		name     string
		searches []string
		wantLen  int
		wantCut  bool
	}{
		{"a short list is kept", []string{"a.example", "b.example"}, 2, false},
		{"more than 32 domains are cut to the first 32", many, 32, true},
		{"more than 2048 characters in all are cut from the end", []string{strings.Repeat("a", 250), strings.Repeat("b", 250),
			strings.Repeat("c", 250), strings.Repeat("d", 250), strings.Repeat("e", 250), strings.Repeat("f", 250),
			strings.Repeat("g", 250), strings.Repeat("h", 250), strings.Repeat("i", 250)}, 8, true},
		{"a domain longer than a DNS name can be is left out", []string{strings.Repeat("y", 254), "ok.example"}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := searchesFitLimits(tt.searches)
			if len(got) != tt.wantLen || cut != tt.wantCut || len(strings.Join(got, " ")) > maxDNSSearchListChars {
				t.Errorf("searchesFitLimits: %d domains (%d chars), cut %v; want %d, cut %v", len(got), len(strings.Join(got, " ")), cut, tt.wantLen, tt.wantCut)
			}
		})
	}
}
