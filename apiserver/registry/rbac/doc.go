// Package rbac declares rbac.authorization.k8s.io/v1 (seed 003 §十二):
// Roles and RoleBindings in a namespace, ClusterRoles and
// ClusterRoleBindings for the cluster, with Kubernetes' validation (the
// seed's swapped roleRef is refused), printers and escalation check (a
// user may grant only what it holds). Feed hands them to the RBAC
// authorizer; ReconcileDefaultPolicy creates the default roles at start.
//
// Where things live:
//
//	file                what it holds
//	roles.go            Roles and ClusterRoles
//	bindings.go         RoleBindings and ClusterRoleBindings
//	validation.go       their validation: rules, role references, subjects, aggregation rules
//	escalation.go       the escalation check: a user may only grant what it holds itself, unless it may escalate or bind
//	reconcile.go        Feed, which keeps the RBAC authorizer's Policy fed, and ReconcileDefaultPolicy at every start
//	reconcile_store.go  the storage the reconciler reads and writes roles through
package rbac

import rbacv1 "k8s.io/api/rbac/v1"

var v1 = rbacv1.SchemeGroupVersion
