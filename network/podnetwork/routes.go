package podnetwork

import (
	"net"
	"net/netip"
	"sort"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/mkube/mkube/proto/runtimev1"
)

// Routes to the other nodes' pods. On a real cluster every pod reaches
// every other pod at its IP, without NAT (Kubernetes' network model), by
// a CNI plugin: flannel, say, learns each Node's spec.podCIDR and its
// public IP from the Node objects, and routes a packet for an IP of that
// CIDR through a tunnel to that node, whose bridge delivers it.
//
// Here the kubelet plays flannel's daemon (peers.go): it watches the
// Nodes and gives its runtime their routes (SetRoutes), each a pod CIDR
// and the peer address of the runtime that holds it, which that
// runtime's kubelet wrote on its Node. The runtime keeps them in a
// RouteTable: a container's connection to an IP of such a CIDR
// (outbound.go) becomes a Dial call on the peer's PodNetwork, the
// tunnel, naming the pod it comes from as its source; the peer connects
// it to its own sandbox as if it came across the bridge.

// RouteTable is the runtime's routes to other nodes' pod CIDRs, longest
// prefix first, with a client of each peer they name.
type RouteTable struct {
	mu     sync.Mutex
	routes []route
	peers  map[string]*grpc.ClientConn // by address, while a route names it
}

type route struct {
	cidr netip.Prefix
	peer string
	conn *grpc.ClientConn
}

// NewRouteTable is a table without routes: every IP is this node's.
func NewRouteTable() *RouteTable { return &RouteTable{peers: map[string]*grpc.ClientConn{}} }

// Set replaces the routes. It validates them all first: a bad route
// changes nothing. Its errors are InvalidArgument statuses, SetRoutes'
// answer.
func (t *RouteTable) Set(in []*runtimev1.Route) error {
	routes := make([]route, 0, len(in))
	for i, r := range in {
		cidr, err := netip.ParsePrefix(r.GetPodCidr())
		if err != nil || !cidr.Addr().Is4() {
			return status.Errorf(codes.InvalidArgument, "routes[%d].pod_cidr: %q is not an IPv4 CIDR", i, r.GetPodCidr())
		}
		if _, _, err := net.SplitHostPort(r.GetPeer()); err != nil {
			return status.Errorf(codes.InvalidArgument, "routes[%d].peer: %q is not host:port", i, r.GetPeer())
		}
		routes = append(routes, route{cidr: cidr.Masked(), peer: r.GetPeer()})
	}
	// Longest prefix first, as a routing table matches.
	sort.SliceStable(routes, func(i, j int) bool { return routes[i].cidr.Bits() > routes[j].cidr.Bits() })

	t.mu.Lock()
	defer t.mu.Unlock()
	named := map[string]bool{}
	for i, r := range routes {
		named[r.peer] = true
		conn := t.peers[r.peer]
		if conn == nil {
			// grpc.NewClient connects lazily: an unreachable peer fails
			// the dials through it, not the routes.
			var err error
			if conn, err = grpc.NewClient(r.peer, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
				return status.Errorf(codes.InvalidArgument, "routes[%d].peer: %v", i, err)
			}
			t.peers[r.peer] = conn
		}
		routes[i].conn = conn
	}
	for addr, conn := range t.peers {
		if !named[addr] {
			conn.Close()
			delete(t.peers, addr)
		}
	}
	t.routes = routes
	return nil
}

// Lookup is the peer whose route holds ip, or nil.
func (t *RouteTable) Lookup(ip netip.Addr) runtimev1.PodNetworkClient {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.routes {
		if r.cidr.Contains(ip) {
			return runtimev1.NewPodNetworkClient(r.conn)
		}
	}
	return nil
}
