package app

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/apiserver/authorization/node"
)

// nodeMode is the Node mode's part of the chain: the Node authorizer on
// graph, then mkube's rule that lets a kubelet fleet impersonate nodes.
func nodeMode(graph *node.Graph) authorization.Authorizer {
	return authorization.Union{node.New(graph), node.FleetImpersonation{}}
}

// followNodeGraph feeds the Node authorizer's graph from the server's
// watch cache, pods and PersistentVolumes, as kube-apiserver feeds it
// from its informers. Call it after srv.Start, before serving: a node's
// first request finds its pods there.
func followNodeGraph(ctx context.Context, srv *apiserver.Server, graph *node.Graph) error {
	if err := srv.Follow(ctx, corev1.SchemeGroupVersion.WithResource("pods"), graph.Pods()); err != nil {
		return err
	}
	return srv.Follow(ctx, corev1.SchemeGroupVersion.WithResource("persistentvolumes"), graph.PersistentVolumes())
}
