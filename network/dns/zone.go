package dns

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mkube/mkube/images/shell"
	"github.com/mkube/mkube/proto/runtimev1"
)

// The cluster DNS. A pod's /etc/resolv.conf names the cluster DNS
// address (the kubelet's --cluster-dns, 10.96.0.10, the kube-dns
// Service's cluster IP) and the search list of its namespace
// (configurer.go). On a real cluster CoreDNS answers there from the
// Services and EndpointSlices it watches, by Kubernetes' DNS
// specification (github.com/kubernetes/dns, docs/specification.md):
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
// it (SetServices, network/proxy's proxier.go), as NodeLocal DNSCache
// answers at a node-local address: the query is answered in the runtime
// (resolver.go), not sent as a datagram to port 53. A name outside the
// zone would be forwarded upstream, and mkube's nodes have none: it is
// not found.

// Zone is the records of the cluster's zone, as one SetServices made
// them; it does not change once made.
type Zone struct {
	servers []netip.Addr
	zone    string                       // "cluster.local"
	records map[string][]shell.DNSRecord // by FQDN, lower case, no final dot
}

// NewZone is the zone of req's Services, answered at req's cluster_dns
// addresses. Its errors are InvalidArgument statuses, SetServices'
// answer. req must have passed network/proxy's ParseRules, which
// validates the cluster IPs and backends it reads.
func NewZone(req *runtimev1.SetServicesRequest) (*Zone, error) {
	servers, err := parseServers(req.GetClusterDns())
	if err != nil {
		return nil, err
	}
	zone := strings.ToLower(strings.TrimSuffix(req.GetClusterDomain(), "."))
	if zone == "" && len(servers) > 0 {
		return nil, status.Error(codes.InvalidArgument, "cluster_domain: a cluster DNS needs its zone")
	}
	d := &Zone{servers: servers, zone: zone, records: map[string][]shell.DNSRecord{}}
	for i, svc := range req.GetServices() {
		if err := d.addService(svc); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "services[%d].%v", i, err)
		}
	}
	return d, nil
}

// add puts one record at name, once.
func (d *Zone) add(name, typ, data string) {
	name = strings.ToLower(name)
	rr := shell.DNSRecord{Name: name + ".", Type: typ, Data: data}
	if !slices.Contains(d.records[name], rr) {
		d.records[name] = append(d.records[name], rr)
	}
}

// addService adds svc's records, by Kubernetes' DNS specification.
func (d *Zone) addService(svc *runtimev1.Service) error {
	name := svc.GetName() + "." + svc.GetNamespace() + ".svc." + d.zone
	if svc.GetExternalName() != "" {
		d.add(name, "CNAME", strings.TrimSuffix(svc.GetExternalName(), ".")+".")
		return nil
	}
	for _, ip := range svc.GetClusterIps() { // validated by network/proxy's ParseRules
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
		for _, b := range p.GetBackends() { // validated by network/proxy's ParseRules
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
func (d *Zone) serves(servers []string) (netip.Addr, bool) {
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

// recordsOf is fqdn's records, and whether the name exists (else
// NXDOMAIN). A-B-C-D.NAMESPACE.pod.ZONE is the IP A.B.C.D, whatever
// pod has it (CoreDNS's "pods insecure").
func (d *Zone) recordsOf(fqdn string) ([]shell.DNSRecord, bool) {
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
func (d *Zone) query(fqdn, typ string) (answer []shell.DNSRecord, exists bool) {
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

// parseServers is the cluster DNS's addresses, or why one is not an IP.
func parseServers(texts []string) ([]netip.Addr, error) {
	out := make([]netip.Addr, 0, len(texts))
	for i, text := range texts {
		ip, err := netip.ParseAddr(text)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "cluster_dns[%d]: %q is not an IP", i, text)
		}
		out = append(out, ip)
	}
	return out, nil
}
