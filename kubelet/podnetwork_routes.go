package kubelet

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
	"github.com/mkube/mkube/proto/runtimev1"
)

// The pod network between nodes: every pod reaches every other pod at
// its IP, whichever node runs it (Kubernetes' network model). A real
// cluster's CNI plugin does it; flannel, for one, runs a daemon on each
// node that writes the node's public address on its Node (the
// flannel.alpha.coreos.com/public-ip annotation), watches all the Nodes,
// and routes each other node's spec.podCIDR through a tunnel to that
// address. The kubelet plays that daemon here:
//
//   - it asks its runtime for the runtime's peer address (SetRoutes, on
//     connecting) and writes it on its Node as mkube.io/pod-network-peer;
//   - it watches the Nodes and gives its runtime a route for each other
//     node's pod CIDR, to the peer address on that Node (SetRoutes), each
//     time the set changes.
//
// The runtime then carries its containers' connections to another
// node's pods through that node's runtime (cri/routes.go). Reading every
// Node is more than a node's identity may (the Node authorizer allows
// only its own): mkube's ClusterRole mkube:pod-network grants it to
// system:nodes, as flannel's ClusterRole grants it to flannel's service
// account.

// annotationPodNetworkPeer names, on a Node, the host:port at which the
// node's runtime carries connections to its pods.
const annotationPodNetworkPeer = "mkube.io/pod-network-peer"

// learnPeerAddress asks the runtime for its peer address. An empty
// SetRoutes, at connecting, is right: the routes are set again once the
// Nodes are listed. A runtime without mkube's PodNetwork (Unimplemented)
// has none.
func (rs *runtimeService) learnPeerAddress(ctx context.Context) error {
	resp, err := rs.network.SetRoutes(ctx, &runtimev1.SetRoutesRequest{})
	if status.Code(err) == codes.Unimplemented {
		return nil
	}
	if err != nil {
		return err
	}
	rs.peerAddress = resp.GetPeerAddress()
	return nil
}

// setPodNetworkPeer writes the runtime's peer address on node, or
// removes a stale one.
func setPodNetworkPeer(node *corev1.Node, peer string) {
	if peer == "" {
		delete(node.Annotations, annotationPodNetworkPeer)
		return
	}
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[annotationPodNetworkPeer] = peer
}

// podNetworkRoutes keeps the runtime's routes to the other nodes' pods
// in step with the Nodes.
type podNetworkRoutes struct {
	*runtimeSync[[]string] // "CIDR via PEER", sorted
	nodes                  *client.Informer
	ours                   func(node string) bool // the fleet's own nodes: their pods are the runtime's own
	runtime                *runtimeService
	log                    *slog.Logger
}

func newPodNetworkRoutes(nodes *client.Informer, ours func(string) bool, rs *runtimeService, clk clock.Clock, log *slog.Logger) *podNetworkRoutes {
	r := &podNetworkRoutes{nodes: nodes, ours: ours, runtime: rs, log: log}
	r.runtimeSync = newRuntimeSync("pod network: routes", r.want, slices.Equal[[]string], r.push, clk, log)
	nodes.AddHandler(client.Handler{
		OnAdd: func(runtime.Object) { r.changed() },
		OnUpdate: func(old, obj runtime.Object) {
			// Heartbeats update every Node every 10 s: only a change of
			// what routes are made of counts.
			if !slices.Equal(routesOf(old.(*corev1.Node)), routesOf(obj.(*corev1.Node))) {
				r.changed()
			}
		},
		OnDelete: func(runtime.Object) { r.changed() },
	})
	return r
}

// routesOf is node's routes, "CIDR via PEER", if it has a peer.
func routesOf(node *corev1.Node) []string {
	peer := node.Annotations[annotationPodNetworkPeer]
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
func (r *podNetworkRoutes) want() []string {
	var out []string
	for _, obj := range r.nodes.Cache().List() {
		node := obj.(*corev1.Node)
		if r.ours(node.Name) || node.Annotations[annotationPodNetworkPeer] == r.runtime.peerAddress {
			continue
		}
		out = append(out, routesOf(node)...)
	}
	slices.Sort(out)
	return out
}

// push gives the runtime the routes.
func (r *podNetworkRoutes) push(ctx context.Context, routes []string) error {
	req := &runtimev1.SetRoutesRequest{}
	for _, route := range routes {
		cidr, peer, _ := strings.Cut(route, " via ")
		req.Routes = append(req.Routes, &runtimev1.Route{PodCidr: cidr, Peer: peer})
	}
	if _, err := r.runtime.network.SetRoutes(ctx, req); err != nil {
		return err
	}
	r.log.Info("pod network: routes to the other nodes' pods", "routes", routes)
	return nil
}
