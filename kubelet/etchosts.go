package kubelet

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/volumemanager"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The kubelet-managed /etc/hosts (kubelet_pods.go's makeHostsMount): the
// kubelet writes each pod a hosts file, /var/lib/kubelet/pods/<uid>/etc-hosts,
// and binds it at /etc/hosts in every container of the pod, so that the
// pod resolves its own name without DNS and the pod's hostAliases are
// there:
//
//	# Kubernetes-managed hosts file.
//	127.0.0.1	localhost
//	...
//	10.244.1.5	web-0.nginx.default.svc.cluster.local	web-0
//
//	# Entries added by HostAliases.
//	123.45.67.89	foo	bar
//
// A pod on the node's network sees the node's own /etc/hosts under a
// header of its own, plus its hostAliases. A container that mounts
// something at /etc/hosts itself keeps what it mounted.

// etcHostsPath is where the hosts file is, in a container and on a node.
const etcHostsPath = "/etc/hosts"

// The headers the kubelet's hosts files begin with.
const (
	managedHostsHeader                = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderWithHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// maxHostnameLength is the kernel's limit on a hostname (64 bytes with
// the terminating NUL): the kubelet cuts a longer pod name to it.
const maxHostnameLength = 63

// podHostname is the hostname of the pod's containers (the kubelet's
// GeneratePodHostNameAndDomain): spec.hostnameOverride, else
// spec.hostname, else the pod's name, cut to 63 characters.
func podHostname(pod *corev1.Pod) string {
	hostname := pod.Name
	switch {
	case pod.Spec.HostnameOverride != nil:
		hostname = *pod.Spec.HostnameOverride
	case pod.Spec.Hostname != "":
		hostname = pod.Spec.Hostname
	}
	if len(hostname) > maxHostnameLength {
		hostname = hostname[:maxHostnameLength]
	}
	return hostname
}

// podDomain is the pod's domain: <subdomain>.<namespace>.svc.<cluster
// domain> when it names a subdomain (the headless Service that gives it
// a DNS name), else none; a hostnameOverride has none either.
func podDomain(pod *corev1.Pod, clusterDomain string) string {
	if pod.Spec.HostnameOverride != nil || pod.Spec.Subdomain == "" {
		return ""
	}
	return fmt.Sprintf("%s.%s.svc.%s", pod.Spec.Subdomain, pod.Namespace, clusterDomain)
}

// hostsMount writes the pod's hosts file and returns its mount at
// /etc/hosts, or nil when c gets none: it mounts something at /etc/hosts
// itself, the pod has no IP yet, or there are no nodes' disks.
func (k *Kubelet) hostsMount(pod *corev1.Pod, sb *kubecontainer.PodSandbox, c corev1.Container) (*runtimeapi.Mount, error) {
	if k.cfg.NodeRoot == "" || (sb.IP == "" && !pod.Spec.HostNetwork) {
		return nil, nil
	}
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) == etcHostsPath {
			return nil, nil
		}
	}
	var content []byte
	if pod.Spec.HostNetwork {
		node, err := os.ReadFile(k.volumes.OnDisk(etcHostsPath))
		if err != nil {
			return nil, fmt.Errorf("read the node's hosts file: %w", err)
		}
		content = nodeHostsFileContent(node, pod.Spec.HostAliases)
	} else {
		content = managedHostsFileContent([]string{sb.IP}, podHostname(pod), podDomain(pod, k.cfg.ClusterDomain), pod.Spec.HostAliases)
	}
	nodePath := path.Join(volumemanager.PodDir(pod.UID), "etc-hosts")
	file := k.volumes.OnDisk(nodePath)
	if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
		return nil, fmt.Errorf("write the pod's hosts file: %w", err)
	}
	if err := os.WriteFile(file, content, 0o644); err != nil {
		return nil, fmt.Errorf("write the pod's hosts file: %w", err)
	}
	return &runtimeapi.Mount{ContainerPath: etcHostsPath, HostPath: nodePath}, nil
}

// managedHostsFileContent is the hosts file of a pod on the pod network:
// localhost, the pod's IPs with its name (its FQDN first if it has a
// domain), then its hostAliases.
func managedHostsFileContent(podIPs []string, hostname, domain string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range podIPs {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.Write(hostAliasesEntries(aliases))
	return b.Bytes()
}

// nodeHostsFileContent is the hosts file of a pod on the node's network:
// the node's own, then the pod's hostAliases.
func nodeHostsFileContent(node []byte, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeaderWithHostNetwork)
	b.Write(node)
	b.Write(hostAliasesEntries(aliases))
	return b.Bytes()
}

// hostAliasesEntries is the hostAliases block: one line per IP with all
// its names, tab-separated.
func hostAliasesEntries(aliases []corev1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}

// ensureNodeFiles gives the node's disk the files a Linux machine has
// and the kubelet reads: /etc/hosts (what a hostNetwork pod sees, and a
// hostPath of /etc/hosts shows) and /etc/resolv.conf (the DNS of a pod
// of dnsPolicy Default, dns.go). A file already there is left alone: it
// is the node's.
func (k *Kubelet) ensureNodeFiles() error {
	if k.cfg.NodeRoot == "" {
		return nil
	}
	files := map[string][]byte{
		etcHostsPath:         nodeHostsFile(k.cfg.NodeIP, k.cfg.NodeName),
		k.cfg.ResolverConfig: []byte(defaultNodeResolvConf),
	}
	for nodePath, content := range files {
		if nodePath == "" {
			continue
		}
		file := k.volumes.OnDisk(nodePath)
		if _, err := os.Stat(file); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// nodeHostsFile is a node's /etc/hosts as a distribution installs it,
// with the node's own name on its address.
func nodeHostsFile(ip netip.Addr, name string) []byte {
	return fmt.Appendf(nil, "127.0.0.1\tlocalhost\n"+
		"::1\tlocalhost ip6-localhost ip6-loopback\n"+
		"fe00::0\tip6-localnet\n"+
		"ff00::0\tip6-mcastprefix\n"+
		"ff02::1\tip6-allnodes\n"+
		"ff02::2\tip6-allrouters\n"+
		"%s\t%s\n", ip, name)
}
