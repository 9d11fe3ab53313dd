package metricsserver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTheKubeletIsReachedAtThePreferredAddressAndPort(t *testing.T) {
	node := func(annotations map[string]string, addrs ...corev1.NodeAddress) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01", Annotations: annotations}}
		n.Status.Addresses = addrs
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = 10255
		return n
	}
	hostname := corev1.NodeAddress{Type: corev1.NodeHostName, Address: "node01"}
	internal := corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "172.18.0.5"}
	for _, tc := range []struct {
		name  string
		flags []string
		node  *corev1.Node
		want  string // "" is an error
	}{
		{"the defaults: Hostname first, --kubelet-port", nil, node(nil, internal, hostname), "https://node01:10250/metrics/resource"},
		{"the manifest's: InternalIP first, the status port", []string{"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname", "--kubelet-use-node-status-port"},
			node(nil, hostname, internal), "https://172.18.0.5:10255/metrics/resource"},
		{"a type the node lacks is skipped", []string{"--kubelet-preferred-address-types=ExternalIP,InternalIP"}, node(nil, hostname, internal), "https://172.18.0.5:10250/metrics/resource"},
		{"the node's own path (KWOK)", []string{"--kubelet-port=10247"}, node(map[string]string{ResourceMetricsPathAnnotation: "/metrics/nodes/node01/metrics/resource"}, hostname),
			"https://node01:10247/metrics/nodes/node01/metrics/resource"},
		{"no address of the preferred types", []string{"--kubelet-preferred-address-types=ExternalIP"}, node(nil, hostname), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := ParseFlags(tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			got, err := (&scraper{opts: opts}).kubeletURL(tc.node)
			if got != tc.want || (err == nil) != (tc.want != "") {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestMetricResolutionIsValidatedAsUpstream(t *testing.T) {
	if _, err := ParseFlags([]string{"--metric-resolution=5s"}); err == nil || err.Error() != "Metric-resolution should be a time duration at least 10s, but value 5s provided" {
		t.Errorf("--metric-resolution=5s: %v", err)
	}
	if _, err := ParseFlags([]string{"--metric-resolution=10s", "--kubelet-request-timeout=10s"}); err == nil || err.Error() != "metric-resolution should be larger than kubelet-request-timeout" {
		t.Errorf("a resolution no longer than the kubelet's timeout: %v", err)
	}
	opts, err := ParseFlags([]string{"--v=2", "--logging-format=text"}) // the real one's logging flags are taken, -v alone used
	if err != nil || opts.MetricResolution.String() != "1m0s" || opts.SecurePort != 10250 || opts.LogLevel() != "info" {
		t.Errorf("defaults: %+v, %v", opts, err)
	}
	if opts, err := ParseFlags([]string{"-v", "6"}); err != nil || opts.LogLevel() != "debug" {
		t.Errorf("-v 6: log level %q, %v; want debug (the scrape rounds)", opts.LogLevel(), err)
	}
}
