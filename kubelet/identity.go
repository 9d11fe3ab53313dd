package kubelet

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
)

// Who a kubelet is to the API server, and so what it may do there (the
// Node authorizer and NodeRestriction, package authorization/node and
// apiserver/admission). There are three cases, told by the client's
// certificate:
//
//   - a node's own certificate (system:node:<name> in system:nodes, the
//     API server's kubelet-<name>.kubeconfig): a kubelet as Kubernetes
//     has it, which may read only what the pods bound to it use. It
//     watches its own pods and the Services; a ConfigMap or Secret is
//     read when a pod needs it, one GET each, and again at each volume
//     resync (Kubernetes' Get change-detection strategy), since it may
//     not list them;
//   - a fleet's (kubelet-fleet.kubeconfig, kubelet --nodes N): the
//     process watches for all its nodes at once under its own identity,
//     and each node's own requests (its Node, Lease, pods' status, the
//     objects its pods use, their tokens) go impersonated as that node,
//     so that the same rules judge each by its own name;
//   - no certificate (the plain port, system:masters): no identity to
//     take; everything is allowed.
const (
	nodeUserPrefix = "system:node:"
	nodesGroup     = "system:nodes"
)

// NodeOf is the node a client's identity is, if it is one's: the user
// system:node:<name> in the group system:nodes.
func NodeOf(id client.Identity) (name string, ok bool) {
	name, ok = strings.CutPrefix(id.User, nodeUserPrefix)
	return name, ok && name != "" && slices.Contains(id.Groups, nodesGroup)
}

// checkIdentity refuses to run nodes that c's identity cannot speak for:
// a node's certificate is that node only (NodeRestriction would refuse
// every write of any other).
func checkIdentity(c *client.Client, names []string) error {
	node, isNode := NodeOf(c.Identity())
	if !isNode {
		return nil
	}
	if len(names) != 1 || names[0] != node {
		return fmt.Errorf("the kubeconfig's user %s is node %s only: a node's certificate cannot run %s; "+
			"use that node's kubeconfig (kubelet-<node>.kubeconfig), or kubelet-fleet.kubeconfig for --nodes",
			c.Identity().User, node, strings.Join(names, ", "))
	}
	return nil
}

// asNode is the client of node name's own requests: c itself for a
// node's certificate or the plain port, else c impersonating the node.
func asNode(c *client.Client, name string) *client.Client {
	if _, isNode := NodeOf(c.Identity()); isNode || c.Identity().User == "" {
		return c
	}
	return c.Impersonate(nodeUserPrefix+name, nodesGroup)
}

// readsEachObject: c may not list ConfigMaps and Secrets (a node's own
// certificate), so the kubelet reads each one its pods use, when they
// use it.
func readsEachObject(c *client.Client) bool {
	_, isNode := NodeOf(c.Identity())
	return isNode
}

// requestTokenAsNode asks for a pod's service-account token as the node
// the pod is bound to, whom the Node authorizer lets have the tokens of
// its pods' service accounts; the fleet's own identity may not.
func (f *Fleet) requestTokenAsNode(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	c := f.client
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		if obj, ok := f.informer.Cache().Get(ns + "/" + ref.Name); ok {
			if k := f.byName[obj.(*corev1.Pod).Spec.NodeName]; k != nil {
				c = k.client
			}
		}
	}
	out := &authenticationv1.TokenRequest{}
	return out, c.Do(ctx, "POST", client.ServiceAccounts.Path(ns, name, "token"), tr, out)
}
