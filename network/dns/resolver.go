package dns

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images/shell"
)

// Asking the cluster DNS. A pod's programs ask through the C library's
// stub resolver, as its /etc/resolv.conf says: its nameservers, its
// search list and ndots (PodResolver). The nameserver that answers is
// this node's Server, from the Zone the last Services made.

// Server is the cluster DNS as one node answers it: the Zone of the
// Services its kubelet last gave the runtime, with its own lock.
type Server struct {
	mu   sync.Mutex
	zone *Zone
}

// NewServer is a cluster DNS without a zone yet: it answers no pod.
func NewServer() *Server { return &Server{zone: &Zone{}} }

// Replace makes z the zone answered from now on.
func (s *Server) Replace(z *Zone) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.zone = z
}

// current is the zone as the last Services made it.
func (s *Server) current() *Zone {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.zone
}

// PodResolver is a sandbox's resolv.conf, its nameservers, search list
// and ndots, and the node's cluster DNS it may reach: how the processes
// of the sandbox's containers ask their nameserver.
type PodResolver struct {
	server   *Server
	servers  []string
	searches []string
	ndots    int
}

// NewPodResolver is the resolver of a sandbox whose DNS config is cfg
// (options ndots:N; the C library's default is 1), asking server.
func NewPodResolver(server *Server, cfg *runtimeapi.DNSConfig) *PodResolver {
	r := &PodResolver{server: server, servers: cfg.GetServers(), searches: cfg.GetSearches(), ndots: 1}
	for _, opt := range cfg.GetOptions() {
		if v, ok := strings.CutPrefix(opt, "ndots:"); ok {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				r.ndots = min(n, 15) // glibc caps it at 15
			}
		}
	}
	return r
}

// Lookup answers q from the zone as the last Services made it.
func (r *PodResolver) Lookup(_ context.Context, q shell.DNSQuestion) (shell.DNSReply, error) {
	return r.server.current().lookup(r, q)
}

// lookup answers q for a pod whose resolv.conf is r: through the
// search list if q asks (ndots deciding whether the name is first tried
// as it is), the first name that exists. A pod of another nameserver
// (dnsPolicy Default or None) gets no answer: mkube's nodes have no
// upstream DNS.
func (d *Zone) lookup(r *PodResolver, q shell.DNSQuestion) (shell.DNSReply, error) {
	server, ok := d.serves(r.servers)
	if !ok {
		return shell.DNSReply{}, errNoNameserver
	}
	names := []string{q.Name}
	if q.Search {
		names = candidates(q.Name, r.searches, r.ndots)
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

// LookupHost resolves name to an address for a connection, as
// getaddrinfo does, with Go's errors.
func (r *PodResolver) LookupHost(ctx context.Context, name string) (netip.Addr, error) {
	reply, err := r.Lookup(ctx, shell.DNSQuestion{Name: name, Type: "A", Search: true})
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
