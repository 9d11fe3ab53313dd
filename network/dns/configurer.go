package dns

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A pod's DNS (pkg/kubelet/network/dns): the kubelet decides what the
// pod's /etc/resolv.conf says, with a Configurer, and hands it to the
// runtime with the sandbox (PodSandboxConfig.dns_config), which writes
// the file into every container of the pod (cri/dns.go, cri/process.go).
// By the pod's dnsPolicy:
//
//   - ClusterFirst (the default): the cluster's DNS Service only, with the
//     search path of the pod's namespace, and ndots:5, so that "web"
//     means web.<namespace>.svc.cluster.local:
//
//     search default.svc.cluster.local svc.cluster.local cluster.local
//     nameserver 10.96.0.10
//     options ndots:5
//
//   - Default: what the node itself uses (its /etc/resolv.conf); a
//     hostNetwork pod's ClusterFirst is Default too, unless it asks for
//     ClusterFirstWithHostNet;
//   - None: nothing but the pod's dnsConfig.
//
// The pod's dnsConfig (nameservers, searches, options) is added to any of
// them. The file is what a real node would write, and what the pod's
// programs read; at the cluster DNS's address the node's runtime answers
// (zone.go, resolver.go); at the node's own nameservers nothing does.

// DefaultClusterDNS is the cluster DNS Service's IP the kubelet names as
// the nameserver (--cluster-dns), the tenth address of the Service range,
// as kubeadm chooses it for CoreDNS's kube-dns Service.
var DefaultClusterDNS = netip.MustParseAddr("10.96.0.10")

// DefaultClusterDomain is the cluster's DNS domain (--cluster-domain).
const DefaultClusterDomain = "cluster.local"

// DefaultResolverConfig is the node's resolver file that pods of
// dnsPolicy Default get (--resolv-conf).
const DefaultResolverConfig = "/etc/resolv.conf"

// The resolver's limits, which the API server's validation and the
// kubelet apply (pkg/apis/core/validation): glibc reads at most 3
// nameservers; 32 search domains of 2048 characters in all.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	maxDNSSearchLength    = 253 // a DNS subdomain; longer ones make some resolvers abort
)

// defaultDNSOptions are a ClusterFirst pod's options: a name with fewer
// than 5 dots is tried with the search path first, so that a Service's
// short name resolves in the cluster before the Internet is asked.
var defaultDNSOptions = []string{"ndots:5"}

// Configurer decides pods' resolver configurations, as the kubelet's
// dns.Configurer does. Its fields are the kubelet's flags.
type Configurer struct {
	// Recorder records the pod's warnings: MissingClusterDNS,
	// DNSConfigForming.
	Recorder Recorder
	// ClusterDNS is the cluster DNS Service's IPs (--cluster-dns); none:
	// ClusterFirst pods get the node's DNS.
	ClusterDNS []netip.Addr
	// ClusterDomain is the cluster's DNS domain (--cluster-domain).
	ClusterDomain string
	// NodeResolvConf reads the node's resolver file (--resolv-conf); nil
	// for a node without disks, whose resolver configuration is empty.
	NodeResolvConf func() ([]byte, error)
}

// Recorder records an event on a pod, as client/record's Recorder does.
type Recorder interface {
	Event(obj runtime.Object, eventType, reason, messageFmt string, args ...any)
}

// PodDNS is the pod's resolver configuration (the kubelet's GetPodDNS).
func (c *Configurer) PodDNS(pod *corev1.Pod) (*runtimeapi.DNSConfig, error) {
	var cfg *runtimeapi.DNSConfig
	switch policy := pod.Spec.DNSPolicy; {
	case policy == corev1.DNSNone:
		cfg = &runtimeapi.DNSConfig{}
	case policy == corev1.DNSDefault, policy == corev1.DNSClusterFirst && pod.Spec.HostNetwork:
		host, err := c.nodeDNS()
		if err != nil {
			return nil, err
		}
		cfg = host
	case len(c.ClusterDNS) == 0:
		// No cluster DNS to name: the pod falls back on the node's.
		msg := fmt.Sprintf("kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.", corev1.DNSClusterFirst, corev1.DNSDefault)
		c.Recorder.Event(pod, corev1.EventTypeWarning, "MissingClusterDNS", "pod: %q. %s", podRef(pod), msg)
		host, err := c.nodeDNS()
		if err != nil {
			return nil, err
		}
		cfg = host
	default: // ClusterFirst, ClusterFirstWithHostNet
		host, err := c.nodeDNS()
		if err != nil {
			return nil, err
		}
		cfg = &runtimeapi.DNSConfig{Options: defaultDNSOptions}
		for _, ip := range c.ClusterDNS {
			cfg.Servers = append(cfg.Servers, ip.String())
		}
		d := c.ClusterDomain
		cfg.Searches = omitDuplicates(append([]string{pod.Namespace + ".svc." + d, "svc." + d, d}, host.Searches...))
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		cfg.Servers = omitDuplicates(append(cfg.Servers, dc.Nameservers...))
		cfg.Searches = omitDuplicates(append(cfg.Searches, dc.Searches...))
		cfg.Options = mergeDNSOptions(cfg.Options, dc.Options)
	}
	return c.dnsFitsLimits(pod, cfg), nil
}

// nodeDNS is the node's resolver configuration, read from its
// resolver file (a node without disks has none).
func (c *Configurer) nodeDNS() (*runtimeapi.DNSConfig, error) {
	if c.NodeResolvConf == nil {
		return &runtimeapi.DNSConfig{}, nil
	}
	data, err := c.NodeResolvConf()
	if err != nil {
		return nil, fmt.Errorf("read the node's resolver configuration: %w", err)
	}
	return parseResolvConf(string(data)), nil
}

// parseResolvConf reads a resolv.conf as the kubelet does: every
// nameserver, the last search line (without the root domain "." and
// trailing dots), and the options, a later one replacing an earlier one
// of the same name.
func parseResolvConf(s string) *runtimeapi.DNSConfig {
	cfg := &runtimeapi.DNSConfig{}
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i] // a comment
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if len(f) > 1 {
				cfg.Servers = append(cfg.Servers, f[1])
			}
		case "search":
			cfg.Searches = []string{}
			for _, d := range f[1:] {
				if d != "." {
					cfg.Searches = append(cfg.Searches, strings.TrimSuffix(d, "."))
				}
			}
		case "options":
			cfg.Options = mergeOptions(cfg.Options, f[1:])
		}
	}
	return cfg
}

// mergeDNSOptions adds the pod's dnsConfig options to opts: one of the
// same name replaces it, in its place.
func mergeDNSOptions(opts []string, add []corev1.PodDNSConfigOption) []string {
	more := make([]string, 0, len(add))
	for _, o := range add {
		if o.Value != nil && *o.Value != "" {
			more = append(more, o.Name+":"+*o.Value)
		} else {
			more = append(more, o.Name)
		}
	}
	return mergeOptions(opts, more)
}

// mergeOptions adds each "name" or "name:value" of add to opts, replacing
// the option of the same name. (The kubelet merges through a map, in a
// random order; the order here is the options' first appearance.)
func mergeOptions(opts, add []string) []string {
	out := append([]string{}, opts...)
	for _, o := range add {
		name, _, _ := strings.Cut(o, ":")
		replaced := false
		for i, e := range out {
			if n, _, _ := strings.Cut(e, ":"); n == name {
				out[i], replaced = o, true
			}
		}
		if !replaced {
			out = append(out, o)
		}
	}
	return out
}

// dnsFitsLimits cuts cfg to what a resolver reads, recording a
// DNSConfigForming warning on the pod when it had to (the kubelet's
// formDNSConfigFitsLimits): the first 3 nameservers, the first 32 search
// domains that are not too long, fewer if together they are longer than
// 2048 characters.
func (c *Configurer) dnsFitsLimits(pod *corev1.Pod, cfg *runtimeapi.DNSConfig) *runtimeapi.DNSConfig {
	if len(cfg.Servers) > maxDNSNameservers {
		cfg.Servers = cfg.Servers[:maxDNSNameservers]
		c.Recorder.Event(pod, corev1.EventTypeWarning, "DNSConfigForming",
			"Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: %s", strings.Join(cfg.Servers, " "))
	}
	searches, cut := searchesFitLimits(cfg.Searches)
	if cut {
		c.Recorder.Event(pod, corev1.EventTypeWarning, "DNSConfigForming",
			"Search Line limits were exceeded, some search paths have been omitted, the applied search line is: %s", strings.Join(searches, " "))
	}
	cfg.Searches = searches
	return cfg
}

// searchesFitLimits applies the search line's limits; cut says some
// domains were left out.
func searchesFitLimits(searches []string) (out []string, cut bool) {
	if len(searches) > maxDNSSearchPaths {
		searches, cut = searches[:maxDNSSearchPaths], true
	}
	for _, s := range searches {
		if len(s) > maxDNSSearchLength {
			cut = true
			continue
		}
		out = append(out, s)
	}
	for len(out) > 0 && len(strings.Join(out, " ")) > maxDNSSearchListChars {
		out, cut = out[:len(out)-1], true
	}
	return out, cut
}

// omitDuplicates keeps the first of each string.
func omitDuplicates(list []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(list))
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// podRef names pod in the kubelet's events, as its format.Pod does:
// NAME_NAMESPACE(UID).
func podRef(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}
