package podnetwork

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/network/tablesync"
	"github.com/mkube/mkube/proto/runtimev1"
)

// The pod network between nodes: every pod reaches every other pod at
// its IP, whichever node runs it (Kubernetes' network model). A real
// cluster's CNI plugin does it; flannel, for one, runs a daemon on each
// node that writes the node's public address on its Node (the
// flannel.alpha.coreos.com/public-ip annotation), watches all the Nodes,
// and routes each other node's spec.podCIDR through a tunnel to that
// address. The kubelet plays that daemon here, with what this file
// gives it:
//
//   - it asks its runtime for the runtime's peer address
//     (LearnPeerAddress, on connecting) and writes it on its Node as
//     mkube.io/pod-network-peer (SetPeerAnnotation);
//   - it watches the Nodes and gives its runtime a route for each other
//     node's pod CIDR, to the peer address on that Node (SetRoutes), each
//     time the set changes (RouteSync).
//
// The runtime then carries its containers' connections to another
// node's pods through that node's runtime (routes.go). Reading every
// Node is more than a node's identity may (the Node authorizer allows
// only its own): mkube's ClusterRole mkube:pod-network grants it to
// system:nodes, as flannel's ClusterRole grants it to flannel's service
// account.

// AnnotationPeer names, on a Node, the host:port at which the node's
// runtime carries connections to its pods.
const AnnotationPeer = "mkube.io/pod-network-peer"

// LearnPeerAddress asks the runtime for its peer address. An empty
// SetRoutes, at connecting, is right: the routes are set again once the
// Nodes are listed. A runtime without mkube's PodNetwork (Unimplemented)
// has none: "".
func LearnPeerAddress(ctx context.Context, network runtimev1.PodNetworkClient) (string, error) {
	resp, err := network.SetRoutes(ctx, &runtimev1.SetRoutesRequest{})
	if status.Code(err) == codes.Unimplemented {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return resp.GetPeerAddress(), nil
}

// SetPeerAnnotation writes the runtime's peer address on node, or
// removes a stale one.
func SetPeerAnnotation(node *corev1.Node, peer string) {
	if peer == "" {
		delete(node.Annotations, AnnotationPeer)
		return
	}
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[AnnotationPeer] = peer
}

// RouteSync keeps the runtime's routes to the other nodes' pods in step
// with the Nodes. Run blocks.
type RouteSync struct {
	loop    *tablesync.Loop[[]string] // "CIDR via PEER", sorted
	nodes   *client.Informer
	ours    func(node string) bool // the fleet's own nodes: their pods are the runtime's own
	network runtimev1.PodNetworkClient
	peer    string // the runtime's own peer address (LearnPeerAddress)
	log     *slog.Logger
}

// NewRouteSync is the routes to the pods of the Nodes in nodes, other
// than ours and than the runtime's own peer address, given to network
// (the runtime's PodNetwork).
func NewRouteSync(nodes *client.Informer, ours func(string) bool, network runtimev1.PodNetworkClient, peer string, clk clock.Clock, log *slog.Logger) *RouteSync {
	r := &RouteSync{nodes: nodes, ours: ours, network: network, peer: peer, log: log}
	r.loop = tablesync.New("pod network: routes", r.want, slices.Equal[[]string], r.push, clk, log)
	nodes.AddHandler(client.Handler{
		OnAdd: func(runtime.Object) { r.loop.Changed() },
		OnUpdate: func(old, obj runtime.Object) {
			// Heartbeats update every Node every 10 s: only a change of
			// what routes are made of counts.
			if !slices.Equal(routesOf(old.(*corev1.Node)), routesOf(obj.(*corev1.Node))) {
				r.loop.Changed()
			}
		},
		OnDelete: func(runtime.Object) { r.loop.Changed() },
	})
	return r
}

// Run keeps the routes until ctx ends.
func (r *RouteSync) Run(ctx context.Context) { r.loop.Run(ctx, r.nodes) }

// routesOf is node's routes, "CIDR via PEER", if it has a peer.
func routesOf(node *corev1.Node) []string {
	peer := node.Annotations[AnnotationPeer]
	if peer == "" {
		return nil
	}
	cidrs := node.Spec.PodCIDRs
	if len(cidrs) == 0 && node.Spec.PodCIDR != "" {
		cidrs = []string{node.Spec.PodCIDR}
	}
	out := make([]string, 0, len(cidrs))
	for _, c := range cidrs {
		out = append(out, c+" via "+peer)
	}
	return out
}

// want is the routes the Nodes call for: each other node's, sorted.
func (r *RouteSync) want() []string {
	var out []string
	for _, obj := range r.nodes.Cache().List() {
		node := obj.(*corev1.Node)
		if r.ours(node.Name) || node.Annotations[AnnotationPeer] == r.peer {
			continue
		}
		out = append(out, routesOf(node)...)
	}
	slices.Sort(out)
	return out
}

// push gives the runtime the routes.
func (r *RouteSync) push(ctx context.Context, routes []string) error {
	req := &runtimev1.SetRoutesRequest{}
	for _, route := range routes {
		cidr, peer, _ := strings.Cut(route, " via ")
		req.Routes = append(req.Routes, &runtimev1.Route{PodCidr: cidr, Peer: peer})
	}
	if _, err := r.network.SetRoutes(ctx, req); err != nil {
		return err
	}
	r.log.Info("pod network: routes to the other nodes' pods", "routes", routes)
	return nil
}
