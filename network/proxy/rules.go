package proxy

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/network/podnetwork/podnet"
	"github.com/mkube/mkube/proto/runtimev1"
)

// Services on the node. A Service's cluster IP is no host's: on a real
// node kube-proxy watches the Services and EndpointSlices and writes
// iptables rules that rewrite a connection to CLUSTER-IP:PORT (or to
// NODE-IP:NODE-PORT) into one to a ready endpoint, picked at random
// (iptables' statistic match), or the same one as the client's last
// connection under ClientIP session affinity. Here the kubelet plays
// kube-proxy and gives its runtime the rules (SetServices, proxier.go);
// the runtime keeps them in a Table, and a container's connection
// (network/podnetwork's outbound.go) is rewritten by Translate before it is routed, and
// then goes to the endpoint's pod as any pod-to-pod connection does,
// across nodes too.
//
// The same Services are the cluster's DNS (network/dns).

// Rules is the node's Service rules as one SetServices gives them,
// validated; they do not change once made.
type Rules struct {
	byAddress map[serviceAddress]*servicePort // cluster and external IPs
	nodePorts map[serviceAddress]*servicePort // by port only: the address is zero
	nodeIPs   map[netip.Addr]bool
	localIPs  map[netip.Addr]bool // this node's own, where host ports are (network/podnetwork's outbound.go)
}

// Table is the node's Service rules in force, and the ClientIP
// affinities they keep, with their own lock: iptables' nat table and
// its recent-match lists.
type Table struct {
	clock clock.Clock

	mu       sync.Mutex
	rules    *Rules
	affinity map[affinityKey]affinityEntry
}

// serviceAddress is what a rule matches: a protocol ("tcp", "udp"), as
// Go names networks, and an address and port.
type serviceAddress struct {
	network string
	netip.AddrPort
}

// servicePort is where one port of a Service sends its connections.
type servicePort struct {
	service  string // NAMESPACE/NAME, for the logs
	key      string // NAMESPACE/NAME:PORT/PROTOCOL, which affinities outlive new rules by
	backends []netip.AddrPort
	affinity time.Duration // ClientIP session affinity's timeout; 0: none
}

// affinityKey is one client of one Service port (servicePort.key):
// ClientIP affinity keeps it on one endpoint.
type affinityKey struct {
	client netip.Addr
	port   string
}

type affinityEntry struct {
	backend  netip.AddrPort
	lastUsed time.Time
}

// NewTable is a table without rules: every address is its own.
func NewTable(clk clock.Clock) *Table {
	return &Table{clock: clk, rules: &Rules{}, affinity: map[affinityKey]affinityEntry{}}
}

// ParseRules is the rules req asks for. It validates them all: a bad
// rule is an InvalidArgument status, SetServices' answer, and no Rules.
func ParseRules(req *runtimev1.SetServicesRequest) (*Rules, error) {
	byAddress := map[serviceAddress]*servicePort{}
	nodePorts := map[serviceAddress]*servicePort{}
	nodeIPs, err := ipSet("node_ips", req.GetNodeIps())
	if err != nil {
		return nil, err
	}
	localIPs, err := ipSet("local_node_ips", req.GetLocalNodeIps())
	if err != nil {
		return nil, err
	}
	for i, svc := range req.GetServices() {
		field := func(f string) string { return "services[" + strconv.Itoa(i) + "]." + f }
		ips, err := parseIPs(field("cluster_ips"), svc.GetClusterIps())
		if err != nil {
			return nil, err
		}
		external, err := parseIPs(field("external_ips"), svc.GetExternalIps())
		if err != nil {
			return nil, err
		}
		for j, p := range svc.GetPorts() {
			network := podnet.NetworkOf(p.GetProtocol())
			if network != "tcp" && network != "udp" {
				continue // the pod network carries no SCTP
			}
			if p.GetPort() < 1 || p.GetPort() > 65535 || p.GetNodePort() < 0 || p.GetNodePort() > 65535 {
				return nil, status.Errorf(codes.InvalidArgument, "%s: port %d or node_port %d is out of range", field("ports["+strconv.Itoa(j)+"]"), p.GetPort(), p.GetNodePort())
			}
			sp := &servicePort{service: svc.GetNamespace() + "/" + svc.GetName(),
				key:      svc.GetNamespace() + "/" + svc.GetName() + ":" + strconv.Itoa(int(p.GetPort())) + "/" + network,
				affinity: time.Duration(svc.GetAffinityTimeoutSeconds()) * time.Second}
			for k, b := range p.GetBackends() {
				ap, err := netip.ParseAddrPort(b)
				if err != nil {
					return nil, status.Errorf(codes.InvalidArgument, "%s: %q is not ip:port", field("ports["+strconv.Itoa(j)+"].backends["+strconv.Itoa(k)+"]"), b)
				}
				sp.backends = append(sp.backends, ap)
			}
			for _, ip := range append(ips, external...) {
				byAddress[serviceAddress{network, netip.AddrPortFrom(ip, uint16(p.GetPort()))}] = sp
			}
			if p.GetNodePort() != 0 {
				nodePorts[serviceAddress{network, netip.AddrPortFrom(netip.Addr{}, uint16(p.GetNodePort()))}] = sp
			}
		}
	}
	return &Rules{byAddress: byAddress, nodePorts: nodePorts, nodeIPs: nodeIPs, localIPs: localIPs}, nil
}

// Replace puts r in force.
func (t *Table) Replace(r *Rules) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rules = r
	// Affinities to a port that is gone, or to an endpoint it no longer
	// has, end here, as kube-proxy's recent-match lists are rebuilt; the
	// others hold across the new rules.
	ports := map[string]*servicePort{}
	for _, sp := range r.byAddress {
		ports[sp.key] = sp
	}
	for k, e := range t.affinity {
		if sp := ports[k.port]; sp == nil || sp.affinity == 0 || !slices.Contains(sp.backends, e.backend) {
			delete(t.affinity, k)
		}
	}
}

// ErrNoEndpoints is kube-proxy's REJECT for a Service without ready
// endpoints: the client sees the connection refused at once (a UDP
// client, the ICMP port unreachable).
var ErrNoEndpoints = status.Error(codes.Unavailable, runtimev1.ConnectionRefused)

// Translate is where a connection from client to dst over network
// ("tcp", "udp") goes: dst itself if no rule holds dst (ok false), else
// one of the Service's endpoints. A UDP socket's datagrams all go where
// its first went, as conntrack keeps a flow on the endpoint its first
// packet was DNATed to.
func (t *Table) Translate(client netip.Addr, network string, dst netip.AddrPort) (to netip.AddrPort, service string, ok bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sp := t.rules.byAddress[serviceAddress{network, dst}]
	if sp == nil && t.rules.nodeIPs[dst.Addr()] {
		sp = t.rules.nodePorts[serviceAddress{network, netip.AddrPortFrom(netip.Addr{}, dst.Port())}]
	}
	if sp == nil {
		return dst, "", false, nil
	}
	if len(sp.backends) == 0 {
		return dst, sp.service, true, ErrNoEndpoints
	}
	now := t.clock.Now()
	key := affinityKey{client: client, port: sp.key}
	if sp.affinity > 0 {
		if e, found := t.affinity[key]; found && now.Sub(e.lastUsed) < sp.affinity {
			t.affinity[key] = affinityEntry{backend: e.backend, lastUsed: now}
			return e.backend, sp.service, true, nil
		}
	}
	to = sp.backends[rand.IntN(len(sp.backends))]
	if sp.affinity > 0 {
		t.affinity[key] = affinityEntry{backend: to, lastUsed: now}
	}
	return to, sp.service, true, nil
}

// IsLocalNodeIP reports whether ip is one of this node's own addresses,
// as the last rules named them.
func (t *Table) IsLocalNodeIP(ip netip.Addr) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rules.localIPs[ip]
}

// IsNodeIP reports whether ip is an address of one of the cluster's
// Nodes, this node's included, as the last rules named them.
func (t *Table) IsNodeIP(ip netip.Addr) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rules.nodeIPs[ip] || t.rules.localIPs[ip]
}

// LocalNodeIP is this node's own address (the lowest, if it has
// several), where its connections to the host's network come from, or
// zero if the rules name none.
func (t *Table) LocalNodeIP() netip.Addr {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lowest netip.Addr
	for ip := range t.rules.localIPs {
		if !lowest.IsValid() || ip.Less(lowest) {
			lowest = ip
		}
	}
	return lowest
}

func ipSet(field string, texts []string) (map[netip.Addr]bool, error) {
	ips, err := parseIPs(field, texts)
	set := make(map[netip.Addr]bool, len(ips))
	for _, ip := range ips {
		set[ip] = true
	}
	return set, err
}

func parseIPs(field string, texts []string) ([]netip.Addr, error) {
	out := make([]netip.Addr, 0, len(texts))
	for i, text := range texts {
		ip, err := netip.ParseAddr(text)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s[%d]: %q is not an IP", field, i, text)
		}
		out = append(out, ip)
	}
	return out, nil
}
