package kubelet

import (
	"os"

	"github.com/mkube/mkube/network/dns"
)

// A pod's DNS: what its /etc/resolv.conf says is decided by the
// network/dns Configurer (pkg/kubelet/network/dns), from the kubelet's
// flags; the runtime writes the file and answers at the cluster DNS's
// address (network/dns).

// DefaultClusterDNS is the cluster DNS Service's IP the kubelet names as
// the nameserver (--cluster-dns): dns.DefaultClusterDNS.
var DefaultClusterDNS = dns.DefaultClusterDNS

// DefaultClusterDomain is the cluster's DNS domain (--cluster-domain).
const DefaultClusterDomain = dns.DefaultClusterDomain

// DefaultResolverConfig is the node's resolver file that pods of
// dnsPolicy Default get (--resolv-conf).
const DefaultResolverConfig = dns.DefaultResolverConfig

// defaultNodeResolvConf is a fake node's /etc/resolv.conf when its disk
// has none yet (ensureNodeFiles): a resolver of the node's network, which
// nothing answers.
const defaultNodeResolvConf = "nameserver 10.240.0.1\n"

// dnsConfigurer is the Configurer of the kubelet's flags, whose PodDNS
// (the kubelet's GetPodDNS) gives each sandbox its resolv.conf
// (kubelet/kuberuntime); it reads the node's resolver file from its disk
// (a node without disks has none).
func (k *Kubelet) dnsConfigurer() *dns.Configurer {
	c := &dns.Configurer{Recorder: k.recorder, ClusterDNS: k.cfg.ClusterDNS, ClusterDomain: k.cfg.ClusterDomain}
	if k.cfg.NodeRoot != "" {
		c.NodeResolvConf = func() ([]byte, error) { return os.ReadFile(k.volumes.OnDisk(k.cfg.ResolverConfig)) }
	}
	return c
}
