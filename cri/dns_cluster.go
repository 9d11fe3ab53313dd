package cri

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mkube/mkube/cri/shell"
	"github.com/mkube/mkube/proto/runtimev1"
)

// The cluster DNS. A pod's /etc/resolv.conf names the cluster DNS
// address (the kubelet's --cluster-dns, 10.96.0.10, the kube-dns
// Service's cluster IP) and the search list of its namespace (dns.go).
// On a real cluster CoreDNS answers there from the Services and
// EndpointSlices it watches, by Kubernetes' DNS specification
// (github.com/kubernetes/dns, docs/specification.md):
//
//   - SERVICE.NAMESPACE.svc.ZONE is the Service's cluster IP; a headless
//     Service's is each of its endpoints' IPs; an ExternalName
//     Service's is a CNAME to its externalName;
//   - HOSTNAME.SERVICE.NAMESPACE.svc.ZONE is the endpoint with that
//     hostname of a headless Service (a pod whose spec.subdomain is
//     the Service);
//   - A-B-C-D.NAMESPACE.pod.ZONE is the IP A.B.C.D (CoreDNS's "pods
//     insecure").
//
// Here each node's runtime answers it from the Services its kubelet gives
// it (SetServices, services.go), as NodeLocal DNSCache answers at a
// node-local address: the query never crosses the pod network, which
// carries TCP only. A name outside the zone would be forwarded upstream,
// and mkube's nodes have none: it is not found.

// clusterDNS is the records of the cluster's zone.
type clusterDNS struct {
	servers []netip.Addr
	zone    string                // "cluster.local"
	records map[string]*dnsRecord // by FQDN, lower case, no final dot
}

// dnsRecord is a name's CNAME, or its addresses.
type dnsRecord struct {
	cname string
	addrs []netip.Addr
}

func newClusterDNS(req *runtimev1.SetServicesRequest) (*clusterDNS, error) {
	servers, err := parseIPs("cluster_dns", req.GetClusterDns())
	if err != nil {
		return nil, err
	}
	zone := strings.ToLower(strings.TrimSuffix(req.GetClusterDomain(), "."))
	if zone == "" && len(servers) > 0 {
		return nil, status.Error(codes.InvalidArgument, "cluster_domain: a cluster DNS needs its zone")
	}
	d := &clusterDNS{servers: servers, zone: zone, records: map[string]*dnsRecord{}}
	add := func(name string, ip netip.Addr) {
		r := d.records[name]
		if r == nil {
			r = &dnsRecord{}
			d.records[name] = r
		}
		for _, have := range r.addrs {
			if have == ip {
				return
			}
		}
		r.addrs = append(r.addrs, ip)
	}
	for i, svc := range req.GetServices() {
		name := strings.ToLower(svc.GetName() + "." + svc.GetNamespace() + ".svc." + zone)
		switch {
		case svc.GetExternalName() != "":
			d.records[name] = &dnsRecord{cname: strings.ToLower(strings.TrimSuffix(svc.GetExternalName(), "."))}
		case len(svc.GetClusterIps()) > 0: // validated by set
			for _, text := range svc.GetClusterIps() {
				add(name, netip.MustParseAddr(text))
			}
		default: // headless
			for j, ep := range svc.GetEndpoints() {
				ip, err := netip.ParseAddr(ep.GetIp())
				if err != nil {
					return nil, status.Errorf(codes.InvalidArgument, "services[%d].endpoints[%d].ip: %q is not an IP", i, j, ep.GetIp())
				}
				add(name, ip)
				if ep.GetHostname() != "" {
					add(strings.ToLower(ep.GetHostname())+"."+name, ip)
				}
			}
		}
	}
	return d, nil
}

// serves reports whether a pod whose nameservers are servers asks the
// cluster DNS, and names the server asked.
func (d *clusterDNS) serves(servers []string) (netip.Addr, bool) {
	for _, text := range servers {
		ip, err := netip.ParseAddr(text)
		if err != nil {
			continue
		}
		for _, s := range d.servers {
			if s == ip {
				return ip, true
			}
		}
	}
	return netip.Addr{}, false
}

// query answers one fully qualified name: its record, a pod's A record,
// or nil (NXDOMAIN).
func (d *clusterDNS) query(fqdn string) *dnsRecord {
	fqdn = strings.ToLower(strings.TrimSuffix(fqdn, "."))
	if r := d.records[fqdn]; r != nil {
		return r
	}
	// A-B-C-D.NAMESPACE.pod.ZONE
	if rest, ok := strings.CutSuffix(fqdn, ".pod."+d.zone); ok {
		dashed, _, ok := strings.Cut(rest, ".")
		if ip, err := netip.ParseAddr(strings.ReplaceAll(dashed, "-", ".")); ok && err == nil && ip.Is4() {
			return &dnsRecord{addrs: []netip.Addr{ip}}
		}
	}
	return nil
}

// lookup resolves name as a container's C library does with the
// resolv.conf dns gives it: through the search list, ndots deciding
// whether the name is first tried as it is, then following CNAMEs.
func (d *clusterDNS) lookup(dns *runtimeDNS, name string) (shell.DNSAnswer, error) {
	server, ok := d.serves(dns.servers)
	notFound := &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	if !ok {
		// Another nameserver (dnsPolicy Default or None): mkube's nodes
		// have no upstream DNS.
		if len(dns.servers) > 0 {
			notFound.Server = net.JoinHostPort(dns.servers[0], "53")
		}
		return shell.DNSAnswer{}, notFound
	}
	notFound.Server = net.JoinHostPort(server.String(), "53")
	for _, candidate := range candidates(name, dns.searches, dns.ndots) {
		answer := shell.DNSAnswer{Server: server, Name: candidate}
		r := d.query(candidate)
		for hops := 0; r != nil && r.cname != "" && hops < 8; hops++ {
			answer.CNAMEs = append(answer.CNAMEs, r.cname)
			r = d.query(r.cname)
		}
		if r != nil && len(r.addrs) > 0 {
			answer.Addrs = r.addrs
			return answer, nil
		}
		if len(answer.CNAMEs) > 0 { // an alias to a name nobody serves
			return answer, nil
		}
	}
	return shell.DNSAnswer{}, notFound
}

// candidates are the names tried for name, in order: as it is first if
// it has at least ndots dots, else after the search list's; a name
// with a final dot is tried alone.
func candidates(name string, searches []string, ndots int) []string {
	if strings.HasSuffix(name, ".") {
		return []string{strings.TrimSuffix(name, ".")}
	}
	searched := make([]string, 0, len(searches))
	for _, s := range searches {
		searched = append(searched, name+"."+strings.TrimSuffix(s, "."))
	}
	if strings.Count(name, ".") >= ndots {
		return append([]string{name}, searched...)
	}
	return append(searched, name)
}

// runtimeDNS is a sandbox's resolv.conf: its nameservers, search list
// and ndots.
type runtimeDNS struct {
	servers  []string
	searches []string
	ndots    int
}

// dnsOf is sb's resolv.conf as its DNS config gives it (options ndots:N;
// the C library's default is 1).
func dnsOf(sb *sandbox) *runtimeDNS {
	cfg := sb.config.GetDnsConfig()
	d := &runtimeDNS{servers: cfg.GetServers(), searches: cfg.GetSearches(), ndots: 1}
	for _, opt := range cfg.GetOptions() {
		if v, ok := strings.CutPrefix(opt, "ndots:"); ok {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				d.ndots = min(n, 15) // glibc caps it at 15
			}
		}
	}
	return d
}

// lookupOf is how the processes of sb's containers resolve names.
func (s *Server) lookupOf(sb *sandbox) func(ctx context.Context, name string) (shell.DNSAnswer, error) {
	dns := dnsOf(sb)
	return func(_ context.Context, name string) (shell.DNSAnswer, error) {
		return s.services.resolver().lookup(dns, name)
	}
}
