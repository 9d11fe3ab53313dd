package rbac

import (
	"context"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
)

// Roles are sets of permissions in one namespace (seed 003 §十二.2.1):
// rules that only grant, never deny.
var Roles = &apiserver.Resource{
	GroupVersion: v1, Name: "roles", Kind: "Role", Namespaced: true,
	New:      func() runtime.Object { return &rbacv1.Role{} },
	NewList:  func() runtime.Object { return &rbacv1.RoleList{} },
	NameRule: nameRule,
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		return validateRules(obj.(*rbacv1.Role).Rules, true)
	},
	Admit: func(ctx context.Context, _ admission.Objects, obj, _ runtime.Object) error {
		r := obj.(*rbacv1.Role)
		return confirmNoRoleEscalation(ctx, "roles", r.Namespace, r.Name, r.Rules)
	},
	Columns: createdAt,
	Row: func(obj runtime.Object, _ time.Time) []any {
		return createdAtCell(obj.(*rbacv1.Role).CreationTimestamp.Time)
	},
}

// ClusterRoles are sets of permissions for the whole cluster (§十二.2.2):
// on cluster-scoped kinds (nodes), on every namespace's objects, and on
// non-resource paths (/healthz).
var ClusterRoles = &apiserver.Resource{
	GroupVersion: v1, Name: "clusterroles", Kind: "ClusterRole",
	New:      func() runtime.Object { return &rbacv1.ClusterRole{} },
	NewList:  func() runtime.Object { return &rbacv1.ClusterRoleList{} },
	NameRule: nameRule,
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		r := obj.(*rbacv1.ClusterRole)
		return append(validateRules(r.Rules, false), validateAggregationRule(r.AggregationRule)...)
	},
	Admit: func(ctx context.Context, _ admission.Objects, obj, old runtime.Object) error {
		r := obj.(*rbacv1.ClusterRole)
		aggregates := r.AggregationRule != nil || (old != nil && old.(*rbacv1.ClusterRole).AggregationRule != nil)
		return confirmNoClusterRoleEscalation(ctx, r.Name, r.Rules, aggregates)
	},
	Columns: createdAt,
	Row: func(obj runtime.Object, _ time.Time) []any {
		return createdAtCell(obj.(*rbacv1.ClusterRole).CreationTimestamp.Time)
	},
}

// createdAt is the column kube-apiserver prints for a kind without a
// printer of its own, as it does for roles: NAME, CREATED AT.
var createdAt = []apiserver.Column{{Name: "Created At", Type: "date"}}

func createdAtCell(t time.Time) []any { return []any{t.UTC().Format(time.RFC3339)} }
