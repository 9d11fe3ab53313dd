package shell

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// dig [@SERVER] [-x IP] [+short] [+noall] [+answer] [+search] [+tcp]
// [+notcp] NAME [TYPE] is BIND's, as Kubernetes' DNS tests probe with
// it: `dig +notcp +noall +answer +search kubernetes.default A` prints
//
//	kubernetes.default.svc.cluster.local. 30 IN A 10.96.0.1
//
// and nothing for a name that is not found; +short prints the data
// alone. It asks the resolv.conf's nameserver; the transport (+tcp,
// +notcp) changes nothing here, where the runtime answers without the
// pod network. Its exit code is 0 for any answer, NXDOMAIN included, 9
// when no server answers, as BIND's.
func dig(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	var short, search bool
	server := ""     // @SERVER: only the resolv.conf's answers
	sections := true // +noall turns the default sections off; +answer turns the answer back on
	answer := true
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "+short":
			short = true
		case a == "+search":
			search = true
		case a == "+nosearch":
			search = false
		case a == "+noall":
			sections, answer = false, false
		case a == "+answer":
			answer = true
		case a == "+noanswer":
			answer = false
		case strings.HasPrefix(a, "+"): // +tcp, +notcp, +time=N, +tries=N...
		case a == "-x" && i+1 < len(args):
			i++
			ip, err := netip.ParseAddr(args[i])
			if err != nil || !ip.Is4() {
				fmt.Fprintf(p.Stderr, "Invalid IP address %s\n", args[i])
				return 1, nil
			}
			operands = append(operands, ReverseName(ip)+".", "PTR")
		case strings.HasPrefix(a, "@"):
			server = a[1:]
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(p.Stderr, "Invalid option: %s\n", a)
			return 1, nil
		default:
			operands = append(operands, a)
		}
	}
	q := DNSQuestion{Name: ".", Type: "NS", Search: search}
	if len(operands) > 0 {
		q.Name, q.Type = operands[0], "A"
	}
	if len(operands) > 1 {
		q.Type = strings.ToUpper(operands[1])
	}
	if p.Lookup == nil {
		fmt.Fprintln(out, ";; connection timed out; no servers could be reached")
		return 9, nil
	}
	reply, err := p.Lookup(ctx, q)
	if err != nil || (server != "" && server != reply.Server.String()) {
		fmt.Fprintln(out, ";; connection timed out; no servers could be reached")
		return 9, nil
	}
	if short {
		for _, rr := range reply.Answer {
			fmt.Fprintln(out, rr.Data)
		}
		return 0, nil
	}
	if sections {
		fmt.Fprintf(out, "\n; <<>> DiG 9.18.28 <<>> %s\n;; global options: +cmd\n;; Got answer:\n", strings.Join(args, " "))
		fmt.Fprintf(out, ";; ->>HEADER<<- opcode: QUERY, status: %s, id: 1\n", reply.Rcode)
		fmt.Fprintf(out, ";; flags: qr aa rd; QUERY: 1, ANSWER: %d, AUTHORITY: 0, ADDITIONAL: 0\n\n", len(reply.Answer))
		fmt.Fprintf(out, ";; QUESTION SECTION:\n;%s.\t\t\tIN\t%s\n\n", strings.TrimSuffix(reply.Name, "."), q.Type)
	}
	if answer && len(reply.Answer) > 0 {
		if sections {
			fmt.Fprintln(out, ";; ANSWER SECTION:")
		}
		for _, rr := range reply.Answer {
			fmt.Fprintf(out, "%s\t\t%d\tIN\t%s\t%s\n", rr.Name, DNSTTL, rr.Type, rr.Data)
		}
	}
	if sections {
		fmt.Fprintf(out, "\n;; SERVER: %s#53(%s) (UDP)\n\n", reply.Server, reply.Server)
	}
	return 0, nil
}

// getent hosts NAME... is glibc's: each name's address from /etc/hosts
// or DNS, "IP<spaces>NAME"; exit 2 if one is not found.
func getent(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 || (args[0] != "hosts" && args[0] != "ahosts") {
		fmt.Fprintf(p.Stderr, "Unknown database: %s\nTry `getent --help' or `getent --usage' for more information.\n", strings.Join(args, " "))
		return 1, nil
	}
	code := 0
	for _, name := range args[1:] {
		addrs, canonical, ok := p.lookupHost(ctx, name)
		if !ok {
			code = 2
			continue
		}
		fmt.Fprintf(out, "%-15s %s\n", addrs[0], canonical)
	}
	return code, nil
}
