package shell

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// The DNS a container's programs ask (nslookup, dig, getent, and the
// names curl, wget and nc connect to): the nameserver of its
// /etc/resolv.conf, which the runtime gives as Process.Lookup.

// DNSQuestion is one query: a name and a record type ("A", "AAAA",
// "SRV", "PTR", "CNAME"), through the resolv.conf search list or not.
type DNSQuestion struct {
	Name   string
	Type   string
	Search bool
}

// DNSRecord is one resource record: Name is fully qualified, with its
// final dot; Data is as dig prints it ("10.96.0.1", "0 100 80
// web.default.svc.cluster.local.").
type DNSRecord struct {
	Name, Type, Data string
}

// DNSReply is a nameserver's answer: the name it is for (after the
// search list), NXDOMAIN or NOERROR, and the records, the CNAMEs
// followed first.
type DNSReply struct {
	Server netip.Addr
	Name   string
	Rcode  string
	Answer []DNSRecord
}

// ReverseName is ip's name in in-addr.arpa, its octets last first,
// where its PTR record is ("1.0.96.10.in-addr.arpa"); an address other
// than IPv4 is itself.
func ReverseName(ip netip.Addr) string {
	if !ip.Is4() {
		return ip.String()
	}
	b := ip.As4()
	return fmt.Sprintf("%d.%d.%d.%d.in-addr.arpa", b[3], b[2], b[1], b[0])
}

// DNSTTL is the records' time to live, CoreDNS's default for the
// kubernetes plugin.
const DNSTTL = 30

// lookupHost resolves name to its addresses as getaddrinfo does: the
// container's /etc/hosts first, then its nameserver through the search
// list. ok is false when the name is not found; reached false when no
// nameserver answered.
func (p *Process) lookupHost(ctx context.Context, name string) (addrs []string, canonical string, ok bool) {
	if addrs, ok := p.hostsFile(name); ok {
		return addrs, name, true
	}
	if p.Lookup == nil {
		return nil, "", false
	}
	reply, err := p.Lookup(ctx, DNSQuestion{Name: name, Type: "A", Search: true})
	if err != nil {
		return nil, "", false
	}
	for _, rr := range reply.Answer {
		if rr.Type == "A" {
			addrs = append(addrs, rr.Data)
			canonical = strings.TrimSuffix(rr.Name, ".")
		}
	}
	return addrs, canonical, len(addrs) > 0
}

// LookupHost is name's addresses as the container's C library (or Go's
// resolver) finds them: /etc/hosts, then the nameserver through the
// search list. Its error is Go's "lookup NAME: no such host".
func (p *Process) LookupHost(ctx context.Context, name string) ([]string, error) {
	if addrs, _, ok := p.lookupHost(ctx, name); ok {
		return addrs, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// hostsFile is name's addresses in the container's /etc/hosts.
func (p *Process) hostsFile(name string) ([]string, bool) {
	data, err := p.FS.ReadFile("/etc/hosts")
	if err != nil {
		return nil, false
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		for _, f := range fields[min(1, len(fields)):] {
			if strings.EqualFold(f, name) {
				out = append(out, fields[0])
				break
			}
		}
	}
	return out, len(out) > 0
}
