package shell

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// nslookup NAME [SERVER] is busybox's: it asks the container's
// nameserver (Process.Lookup) and prints
//
//	Server:		10.96.0.10
//	Address:	10.96.0.10:53
//
//	Name:	kubernetes.default.svc.cluster.local
//	Address: 10.96.0.1
//
// or "** server can't find NAME: NXDOMAIN" and exits 1, as a readiness
// script or an init container waiting for a Service expects. An IP is
// looked up by its PTR record ("1.0.96.10.in-addr.arpa	name =
// kubernetes.default.svc.cluster.local"). A SERVER
// operand is refused: only the resolv.conf's nameserver is simulated.
func nslookup(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	var operands []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			if strings.HasPrefix(a, "-type=") || strings.HasPrefix(a, "-query=") || a == "-debug" {
				continue // the A records are what is printed
			}
			fmt.Fprintf(p.Stderr, "nslookup: unrecognized option '%s'\n", a)
			return 1, nil
		}
		operands = append(operands, a)
	}
	if len(operands) != 1 {
		if len(operands) == 2 {
			fmt.Fprintf(p.Stderr, "nslookup: only the nameserver of /etc/resolv.conf answers here, not %s\n", operands[1])
		} else {
			fmt.Fprintln(p.Stderr, "Usage: nslookup [-type=QUERY_TYPE] HOST [DNS_SERVER]")
		}
		return 1, nil
	}
	name := operands[0]
	q := DNSQuestion{Name: name, Type: "A", Search: true}
	ip, err := netip.ParseAddr(name)
	if err == nil { // a reverse lookup: the PTR record of IP's in-addr.arpa name
		q = DNSQuestion{Name: ReverseName(ip), Type: "PTR"}
		name = q.Name
	}
	if p.Lookup == nil {
		fmt.Fprintln(out, ";; connection timed out; no servers could be reached")
		return 1, nil
	}
	reply, err := p.Lookup(ctx, q)
	if err != nil {
		fmt.Fprintf(out, ";; connection timed out; no servers could be reached\n\n")
		return 1, nil
	}
	fmt.Fprintf(out, "Server:\t\t%s\nAddress:\t%s:53\n\n", reply.Server, reply.Server)
	if reply.Rcode == "NXDOMAIN" {
		fmt.Fprintf(out, "** server can't find %s: NXDOMAIN\n\n", name)
		return 1, nil
	}
	found := false
	for _, rr := range reply.Answer {
		switch rr.Type {
		case "CNAME":
			fmt.Fprintf(out, "%s\tcanonical name = %s\n", strings.TrimSuffix(rr.Name, "."), rr.Data)
		case "PTR":
			fmt.Fprintf(out, "%s\tname = %s\n", strings.TrimSuffix(rr.Name, "."), strings.TrimSuffix(rr.Data, "."))
			found = true
		case "A":
			if !found {
				fmt.Fprintf(out, "Name:\t%s\n", strings.TrimSuffix(rr.Name, "."))
			}
			fmt.Fprintf(out, "Address: %s\n", rr.Data)
			found = true
		}
	}
	if !found {
		fmt.Fprintf(out, "*** Can't find %s: No answer\n\n", name)
		return 1, nil
	}
	fmt.Fprintln(out)
	return 0, nil
}
