package cri

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A container's /etc/resolv.conf is its sandbox's, as containerd writes
// it: from the DNS configuration the kubelet put in the PodSandboxConfig
// (its servers, searches and options, from the pod's dnsPolicy and
// dnsConfig: network/dns/configurer.go), in the order
//
//	search default.svc.cluster.local svc.cluster.local cluster.local
//	nameserver 10.96.0.10
//	options ndots:5
//
// A sandbox made without one (by crictl) gets the node's own
// /etc/resolv.conf, as containerd copies the host's.

// resolvConf is the content of sb's /etc/resolv.conf; ok is false when
// there is none to give (no DNS config and no node's file).
func (s *Server) resolvConf(sb *sandbox) ([]byte, bool) {
	dns := sb.config.GetDnsConfig()
	if dns == nil {
		if s.opts.NodeRoot == "" {
			return nil, false
		}
		data, err := os.ReadFile(filepath.Join(s.nodeDisk(sb.config.GetLabels()[labelNodeName]), "etc", "resolv.conf"))
		return data, err == nil
	}
	var b strings.Builder
	if len(dns.GetSearches()) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(dns.GetSearches(), " "))
	}
	for _, ns := range dns.GetServers() {
		fmt.Fprintf(&b, "nameserver %s\n", ns)
	}
	if len(dns.GetOptions()) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(dns.GetOptions(), " "))
	}
	return []byte(b.String()), true
}
