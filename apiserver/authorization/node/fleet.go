package node

import (
	"context"
	"slices"
	"strings"

	"github.com/mkube/mkube/apiserver/authorization"
)

// FleetImpersonation is mkube's own rule, for `kubelet --nodes N`: a
// member of mkube:kubelet-fleets may impersonate the users
// system:node:<any name> and the group system:nodes, and nothing else.
//
// Why a rule of its own: the fleet's nodes are named by its flags, which
// the API server does not know, and RBAC's resourceNames are exact names,
// so RBAC could only grant impersonating every user (the fleet could then
// act as any user bound to a role) or a generated list of thousands of
// names. What the fleet may do is exactly "be any node"; each of its
// nodes' requests is then judged by the Node authorizer and
// NodeRestriction under that node's own name. The fleet's shared watches
// (every pod bound to a node, Secrets, ConfigMaps, ...) are RBAC's, in
// its ClusterRole mkube:kubelet-fleet: more than a real kubelet may
// read, which is the price of one watch for 5,000 nodes.
type FleetImpersonation struct{}

func (FleetImpersonation) Authorize(_ context.Context, a authorization.Attributes) (authorization.Decision, string, error) {
	if a.Verb != "impersonate" || !a.ResourceRequest || a.APIGroup != "" || a.Subresource != "" ||
		!slices.Contains(a.User.Groups, FleetsGroup) {
		return authorization.NoOpinion, "", nil
	}
	switch a.Resource {
	case "users":
		if name, ok := strings.CutPrefix(a.Name, UserPrefix); ok && name != "" {
			return authorization.Allow, "", nil
		}
	case "groups":
		if a.Name == NodesGroup {
			return authorization.Allow, "", nil
		}
	}
	return authorization.NoOpinion, "", nil
}
