package authorization

import (
	"fmt"
	"strings"
)

// The values of --authorization-mode mkube has: Node (what a kubelet may
// do: read what the pods bound to it use, write its own Node, Lease and
// pods' status; package node), RBAC and AlwaysAllow. Kubernetes also has
// ABAC, Webhook and AlwaysDeny.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeNode        = "Node"
	ModeRBAC        = "RBAC"
)

// DefaultModes is kube-apiserver's default as kubeadm sets it, and
// mkube's: the Node authorizer for kubelets, then RBAC for everyone.
const DefaultModes = ModeNode + "," + ModeRBAC

// Masters is the group kube-apiserver lets do anything, before any mode.
const Masters = "system:masters"

// ParseModes reads --authorization-mode, a comma-separated list, refusing
// what kube-apiserver refuses: an unknown mode, or one named twice.
func ParseModes(flag string) ([]string, error) {
	if strings.TrimSpace(flag) == "" {
		return nil, fmt.Errorf("at least one authorization-mode must be passed")
	}
	modes := strings.Split(flag, ",")
	for i := range modes {
		modes[i] = strings.TrimSpace(modes[i])
	}
	seen := map[string]bool{}
	for _, m := range modes {
		switch {
		case m != ModeAlwaysAllow && m != ModeRBAC && m != ModeNode:
			return nil, fmt.Errorf("authorization-mode %q is not a valid mode", m)
		case seen[m]:
			return nil, fmt.Errorf("authorization-mode %q has mode specified more than once", modes)
		}
		seen[m] = true
	}
	return modes, nil
}

// Chain is the authorizer kube-apiserver builds from its modes:
// PrivilegedGroups{system:masters} first, then each mode in the order
// given. rbac is the RBAC authorizer, used if RBAC is among the modes;
// node the Node mode's (the Node authorizer and mkube's rule for kubelet
// fleets), used if Node is; a nil one is left out.
func Chain(modes []string, rbac, node Authorizer) Union {
	u := Union{PrivilegedGroups{Masters}}
	for _, m := range modes {
		switch m {
		case ModeAlwaysAllow:
			u = append(u, AlwaysAllow{})
		case ModeNode:
			if node != nil {
				u = append(u, node)
			}
		case ModeRBAC:
			if rbac != nil {
				u = append(u, rbac)
			}
		}
	}
	return u
}
