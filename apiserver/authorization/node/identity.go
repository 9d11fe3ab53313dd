package node

import (
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// The names that make a user a node, Kubernetes' (pkg/auth/nodeidentifier).
const (
	UserPrefix = "system:node:"
	NodesGroup = "system:nodes"
)

// FleetsGroup is mkube's group of kubelet processes that run many nodes
// and may impersonate them (FleetImpersonation).
const FleetsGroup = "mkube:kubelet-fleets"

// Identify says whether user is a node and which: a user named
// system:node:<name> in group system:nodes. isNode with an empty name is
// a node that cannot be told apart ("system:node:"), which may do
// nothing. A user with the name but not the group is not a node (nor is
// a member of the group with another name), as in Kubernetes.
func Identify(user authenticationv1.UserInfo) (name string, isNode bool) {
	name, ok := strings.CutPrefix(user.Username, UserPrefix)
	if !ok || !slices.Contains(user.Groups, NodesGroup) {
		return "", false
	}
	return name, true
}
