// Package rbac declares rbac.authorization.k8s.io/v1 (seed 003 §十二):
// Roles and RoleBindings in a namespace, ClusterRoles and
// ClusterRoleBindings for the cluster, with Kubernetes' validation (the
// seed's swapped roleRef is refused), printers and escalation check (a
// user may grant only what it holds). Feed hands them to the RBAC
// authorizer; ReconcileDefaultPolicy creates the default roles at start.
package rbac

import rbacv1 "k8s.io/api/rbac/v1"

var v1 = rbacv1.SchemeGroupVersion
