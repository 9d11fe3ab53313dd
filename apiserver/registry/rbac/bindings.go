package rbac

import (
	"context"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
)

// RoleBindings grant a Role, or a ClusterRole, to users, groups and
// service accounts within their namespace (seed 003 §十二.2.3).
var RoleBindings = &apiserver.Resource{
	GroupVersion: v1, Name: "rolebindings", Kind: "RoleBinding", Namespaced: true,
	New:      func() runtime.Object { return &rbacv1.RoleBinding{} },
	NewList:  func() runtime.Object { return &rbacv1.RoleBindingList{} },
	NameRule: nameRule,
	Default: func(obj runtime.Object) {
		b := obj.(*rbacv1.RoleBinding)
		defaultBinding(&b.RoleRef, b.Subjects)
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		b := obj.(*rbacv1.RoleBinding)
		var oldRef *rbacv1.RoleRef
		if old != nil {
			oldRef = &old.(*rbacv1.RoleBinding).RoleRef
		}
		return validateBinding(b.RoleRef, b.Subjects, true, oldRef)
	},
	Admit: func(ctx context.Context, _ admission.Objects, obj, _ runtime.Object) error {
		b := obj.(*rbacv1.RoleBinding)
		return confirmNoBindingEscalation(ctx, "rolebindings", b.Namespace, b.Name, b.RoleRef)
	},
	Columns: bindingColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		b := obj.(*rbacv1.RoleBinding)
		return bindingRow(b.RoleRef, b.Subjects, b.CreationTimestamp, now)
	},
}

// ClusterRoleBindings grant a ClusterRole in every namespace and on the
// cluster's own kinds and paths.
var ClusterRoleBindings = &apiserver.Resource{
	GroupVersion: v1, Name: "clusterrolebindings", Kind: "ClusterRoleBinding",
	New:      func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
	NewList:  func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
	NameRule: nameRule,
	Default: func(obj runtime.Object) {
		b := obj.(*rbacv1.ClusterRoleBinding)
		defaultBinding(&b.RoleRef, b.Subjects)
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		b := obj.(*rbacv1.ClusterRoleBinding)
		var oldRef *rbacv1.RoleRef
		if old != nil {
			oldRef = &old.(*rbacv1.ClusterRoleBinding).RoleRef
		}
		return validateBinding(b.RoleRef, b.Subjects, false, oldRef)
	},
	Admit: func(ctx context.Context, _ admission.Objects, obj, _ runtime.Object) error {
		b := obj.(*rbacv1.ClusterRoleBinding)
		return confirmNoBindingEscalation(ctx, "clusterrolebindings", "", b.Name, b.RoleRef)
	},
	Columns: bindingColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		b := obj.(*rbacv1.ClusterRoleBinding)
		return bindingRow(b.RoleRef, b.Subjects, b.CreationTimestamp, now)
	},
}

// bindingColumns are kube-apiserver's: ROLE (Role/pod-reader) and AGE,
// and with -o wide the subjects by kind.
var bindingColumns = []apiserver.Column{
	{Name: "Role", Type: "string"}, {Name: "Age", Type: "string"},
	{Name: "Users", Type: "string", Priority: 1}, {Name: "Groups", Type: "string", Priority: 1},
	{Name: "ServiceAccounts", Type: "string", Priority: 1},
}

func bindingRow(ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []any {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		}
	}
	return []any{ref.Kind + "/" + ref.Name, apiserver.Age(created, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
}
