package cri

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mkube/mkube/images/shell"
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
// node-local address: the query is answered in the runtime, not sent
// as a datagram to port 53. A name outside the zone would be forwarded upstream,
// and mkube's nodes have none: it is not found.

// clusterDNS is the records of the cluster's zone.
type clusterDNS struct {
	servers []netip.Addr
	zone    string                       // "cluster.local"
	records map[string][]shell.DNSRecord // by FQDN, lower case, no final dot
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
	d := &clusterDNS{servers: servers, zone: zone, records: map[string][]shell.DNSRecord{}}
	for i, svc := range req.GetServices() {
		if err := d.addService(svc); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "services[%d].%v", i, err)
		}
	}
	return d, nil
}

// add puts one record at name, once.
func (d *clusterDNS) add(name, typ, data string) {
	name = strings.ToLower(name)
	rr := shell.DNSRecord{Name: name + ".", Type: typ, Data: data}
	if !slices.Contains(d.records[name], rr) {
		d.records[name] = append(d.records[name], rr)
	}
}

// addService adds svc's records, by Kubernetes' DNS specification.
func (d *clusterDNS) addService(svc *runtimev1.Service) error {
	name := svc.GetName() + "." + svc.GetNamespace() + ".svc." + d.zone
	if svc.GetExternalName() != "" {
		d.add(name, "CNAME", strings.TrimSuffix(svc.GetExternalName(), ".")+".")
		return nil
	}
	for _, ip := range svc.GetClusterIps() { // validated by set
		d.add(name, "A", ip)
		d.add(shell.ReverseName(netip.MustParseAddr(ip)), "PTR", name+".")
	}
	// A headless Service's name is its endpoints', each also by its
	// hostname (or its IP, dashed) under the Service's name.
	hostnames := map[string]string{}
	for j, ep := range svc.GetEndpoints() {
		ip, err := netip.ParseAddr(ep.GetIp())
		if err != nil || !ip.Is4() {
			return fmt.Errorf("endpoints[%d].ip: %q is not an IPv4 address", j, ep.GetIp())
		}
		if len(svc.GetClusterIps()) > 0 {
			continue
		}
		host := ep.GetHostname()
		if host == "" {
			host = strings.ReplaceAll(ip.String(), ".", "-")
		}
		hostnames[ip.String()] = host
		d.add(name, "A", ip.String())
		d.add(host+"."+name, "A", ip.String())
		if ep.GetHostname() != "" {
			d.add(shell.ReverseName(ip), "PTR", host+"."+name+".")
		}
	}
	// _PORT._PROTOCOL.SERVICE: a named port's SRV, to the Service's name,
	// or for a headless Service to each endpoint.
	for _, p := range svc.GetPorts() {
		if p.GetName() == "" {
			continue
		}
		srv := "_" + p.GetName() + "._" + strings.ToLower(cmp.Or(p.GetProtocol(), "TCP")) + "." + name
		if len(svc.GetClusterIps()) > 0 {
			d.add(srv, "SRV", fmt.Sprintf("0 100 %d %s.", p.GetPort(), name))
			continue
		}
		for _, b := range p.GetBackends() { // validated by set
			ap := netip.MustParseAddrPort(b)
			if host, ok := hostnames[ap.Addr().String()]; ok {
				d.add(srv, "SRV", fmt.Sprintf("0 %d %d %s.%s.", 100/len(p.GetBackends()), ap.Port(), host, name))
			}
		}
	}
	return nil
}

// serves reports whether a pod whose nameservers are servers asks the
// cluster DNS, and names the server asked.
func (d *clusterDNS) serves(servers []string) (netip.Addr, bool) {
	for _, text := range servers {
		ip, err := netip.ParseAddr(text)
		if err != nil {
			continue
		}
		if slices.Contains(d.servers, ip) {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// records is fqdn's records, and whether the name exists (else
// NXDOMAIN). A-B-C-D.NAMESPACE.pod.ZONE is the IP A.B.C.D, whatever
// pod has it (CoreDNS's "pods insecure").
func (d *clusterDNS) recordsOf(fqdn string) ([]shell.DNSRecord, bool) {
	if rrs, ok := d.records[fqdn]; ok {
		return rrs, true
	}
	if rest, ok := strings.CutSuffix(fqdn, ".pod."+d.zone); ok {
		dashed, _, ok := strings.Cut(rest, ".")
		if ip, err := netip.ParseAddr(strings.ReplaceAll(dashed, "-", ".")); ok && err == nil && ip.Is4() {
			return []shell.DNSRecord{{Name: fqdn + ".", Type: "A", Data: ip.String()}}, true
		}
	}
	return nil, false
}

// query answers one fully qualified name's records of type typ, the
// CNAMEs on the way first, as an authoritative server of the zone
// does; exists is false for NXDOMAIN. A name outside the zone would be
// forwarded upstream, and mkube's nodes have none: it is not found.
func (d *clusterDNS) query(fqdn, typ string) (answer []shell.DNSRecord, exists bool) {
	fqdn = strings.ToLower(strings.TrimSuffix(fqdn, "."))
	for hops := 0; hops < 8; hops++ {
		rrs, ok := d.recordsOf(fqdn)
		if !ok {
			return answer, hops > 0
		}
		var cname *shell.DNSRecord
		for _, rr := range rrs {
			switch {
			case rr.Type == typ:
				answer = append(answer, rr)
			case rr.Type == "CNAME":
				cname = &rr
			}
		}
		if cname == nil || typ == "CNAME" {
			return answer, true
		}
		answer = append(answer, *cname)
		fqdn = strings.ToLower(strings.TrimSuffix(cname.Data, "."))
	}
	return answer, true
}

// lookup answers q for a pod whose resolv.conf is dns: through the
// search list if q asks (ndots deciding whether the name is first tried
// as it is), the first name that exists. A pod of another nameserver
// (dnsPolicy Default or None) gets no answer: mkube's nodes have no
// upstream DNS.
func (d *clusterDNS) lookup(dns *runtimeDNS, q shell.DNSQuestion) (shell.DNSReply, error) {
	server, ok := d.serves(dns.servers)
	if !ok {
		return shell.DNSReply{}, errNoNameserver
	}
	names := []string{q.Name}
	if q.Search {
		names = candidates(q.Name, dns.searches, dns.ndots)
	}
	for _, name := range names {
		if answer, exists := d.query(name, q.Type); exists {
			return shell.DNSReply{Server: server, Name: strings.TrimSuffix(name, ".") + ".", Rcode: "NOERROR", Answer: answer}, nil
		}
	}
	return shell.DNSReply{Server: server, Name: strings.TrimSuffix(names[len(names)-1], ".") + ".", Rcode: "NXDOMAIN"}, nil
}

// errNoNameserver is a query no nameserver answers.
var errNoNameserver = errors.New("no servers could be reached")

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

// lookupOf is how the processes of sb's containers ask their
// nameserver.
func (s *Server) lookupOf(sb *sandbox) func(ctx context.Context, q shell.DNSQuestion) (shell.DNSReply, error) {
	dns := dnsOf(sb)
	return func(_ context.Context, q shell.DNSQuestion) (shell.DNSReply, error) {
		return s.services.resolver().lookup(dns, q)
	}
}

// lookupHost resolves name to an address for a connection, as
// getaddrinfo does, with Go's errors.
func (s *Server) lookupHost(ctx context.Context, lookup func(context.Context, shell.DNSQuestion) (shell.DNSReply, error), name string) (netip.Addr, error) {
	reply, err := lookup(ctx, shell.DNSQuestion{Name: name, Type: "A", Search: true})
	if err != nil {
		return netip.Addr{}, &net.DNSError{Err: "i/o timeout", Name: name, IsTimeout: true}
	}
	for _, rr := range reply.Answer {
		if rr.Type == "A" {
			return netip.ParseAddr(rr.Data)
		}
	}
	return netip.Addr{}, &net.DNSError{Err: "no such host", Name: name, Server: reply.Server.String() + ":53", IsNotFound: true}
}
