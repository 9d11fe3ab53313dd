package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPodHostsFiles(t *testing.T) {
	const localhost = "# Kubernetes-managed hosts file.\n" +
		"127.0.0.1\tlocalhost\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\n" +
		"fe00::0\tip6-mcastprefix\n" +
		"fe00::1\tip6-allnodes\n" +
		"fe00::2\tip6-allrouters\n"
	long := "a-pod-name-that-is-much-longer-than-the-sixty-three-characters-a-hostname-may-have"
	tests := []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{"a pod resolves its own name to its IP",
			corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}},
			localhost + "10.244.1.5\tweb\n"},
		{"with a hostname and a subdomain, its FQDN in the headless Service's domain comes first",
			corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Namespace: "shop"},
				Spec: corev1.PodSpec{Hostname: "web-0", Subdomain: "nginx"}},
			localhost + "10.244.1.5\tweb-0.nginx.shop.svc.cluster.local\tweb-0\n"},
		{"hostAliases follow in their own block, one line per IP",
			corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: corev1.PodSpec{HostAliases: []corev1.HostAlias{
					{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}, {IP: "10.1.2.3", Hostnames: []string{"db"}}}}},
			localhost + "10.244.1.5\tweb\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n10.1.2.3\tdb\n"},
		{"a name longer than a hostname may be is cut to 63 characters",
			corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: long, Namespace: "default"}},
			localhost + "10.244.1.5\t" + long[:63] + "\n"},
		{"hostnameOverride is the name, without a domain",
			corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: corev1.PodSpec{HostnameOverride: ptr.To("my.host"), Subdomain: "nginx"}},
			localhost + "10.244.1.5\tmy.host\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(managedHostsFileContent([]string{"10.244.1.5"}, podHostname(&tt.pod), podDomain(&tt.pod, DefaultClusterDomain), tt.pod.Spec.HostAliases))
			if got != tt.want {
				t.Errorf("hosts file:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestAHostNetworkPodSeesTheNodesHostsFile(t *testing.T) {
	node := nodeHostsFile(hostIP, "node01")
	got := string(nodeHostsFileContent(node, []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"db"}}}))
	want := "# Kubernetes-managed hosts file (host network).\n" + string(node) + "\n# Entries added by HostAliases.\n10.1.2.3\tdb\n"
	if got != want {
		t.Errorf("hosts file:\n%s\nwant:\n%s", got, want)
	}
	if last := "10.240.1.1\tnode01\n"; string(node[len(node)-len(last):]) != last {
		t.Errorf("the node's hosts file ends %q, want its own name on its address", node)
	}
}
