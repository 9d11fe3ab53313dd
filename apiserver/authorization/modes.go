package authorization

import (
	"fmt"
	"strings"
)

// The values of --authorization-mode mkube has. Kubernetes also has Node
// (what a kubelet may read: the pods bound to it and their secrets),
// ABAC, Webhook and AlwaysDeny; Node comes with node credentials.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeRBAC        = "RBAC"
)

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
		case m == "Node":
			return nil, fmt.Errorf("authorization-mode %q is not supported by mkube yet (it comes with node credentials): use %s or %s", m, ModeRBAC, ModeAlwaysAllow)
		case m != ModeAlwaysAllow && m != ModeRBAC:
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
// given. rbac is the RBAC authorizer, used if RBAC is among the modes.
func Chain(modes []string, rbac Authorizer) Union {
	u := Union{PrivilegedGroups{Masters}}
	for _, m := range modes {
		switch m {
		case ModeAlwaysAllow:
			u = append(u, AlwaysAllow{})
		case ModeRBAC:
			u = append(u, rbac)
		}
	}
	return u
}
