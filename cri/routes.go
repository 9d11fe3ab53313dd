package cri

import (
	"context"
	"fmt"
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
// Here the kubelet plays flannel's daemon: it watches the Nodes and
// gives its runtime their routes (SetRoutes), each a pod CIDR and the
// peer address of the runtime that holds it, which that runtime's
// kubelet wrote on its Node. A container's connection to an IP of such a
// CIDR (outbound.go) becomes a Dial call on the peer's PodNetwork, the
// tunnel, naming the pod it comes from as its source; the peer connects
// it to its own sandbox as if it came across the bridge.

// routeTable is the runtime's routes to other nodes' pod CIDRs, longest
// prefix first, with a client of each peer they name.
type routeTable struct {
	mu     sync.Mutex
	routes []route
	peers  map[string]*grpc.ClientConn // by address, while a route names it
}

type route struct {
	cidr netip.Prefix
	peer string
	conn *grpc.ClientConn
}

func newRouteTable() *routeTable { return &routeTable{peers: map[string]*grpc.ClientConn{}} }

// set replaces the routes. It validates them all first: a bad route
// changes nothing.
func (t *routeTable) set(in []*runtimev1.Route) error {
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

// lookup is the peer whose route holds ip, or nil.
func (t *routeTable) lookup(ip netip.Addr) runtimev1.PodNetworkClient {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.routes {
		if r.cidr.Contains(ip) {
			return runtimev1.NewPodNetworkClient(r.conn)
		}
	}
	return nil
}

// SetRoutes replaces the routes to the other nodes' pods and answers with
// this runtime's peer address. The peer address serves only Dial.
func (n podNetworkServer) SetRoutes(_ context.Context, req *runtimev1.SetRoutesRequest) (*runtimev1.SetRoutesResponse, error) {
	if n.peer {
		return nil, status.Error(codes.PermissionDenied, "a peer may not set this runtime's routes")
	}
	if err := n.s.routes.set(req.GetRoutes()); err != nil {
		return nil, err
	}
	cidrs := make([]string, len(req.GetRoutes()))
	for i, r := range req.GetRoutes() {
		cidrs[i] = fmt.Sprintf("%s via %s", r.GetPodCidr(), r.GetPeer())
	}
	n.s.log.Info("pod network: routes set", "routes", cidrs)
	return &runtimev1.SetRoutesResponse{PeerAddress: n.s.opts.PeerAddress}, nil
}
