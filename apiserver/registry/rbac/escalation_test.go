package rbac_test

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization"
	rbacauthz "github.com/mkube/mkube/apiserver/authorization/rbac"
	"github.com/mkube/mkube/apiserver/registry/rbac"
)

// A user may write only roles and bindings that grant what it holds,
// unless it may escalate (roles) or bind (that role), or is a master.
func TestNobodyGrantsWhatTheyDoNotHold(t *testing.T) {
	ref := func(kind, name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	u := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: name}
	}
	rule := func(verbs []string, group, res string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: []string{res}}
	}
	p := rbacauthz.NewPolicy()
	p.ClusterRoles().Replace([]runtime.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "pod-admin"}, Rules: []rbacv1.PolicyRule{
			rule([]string{"*"}, "", "pods"), rule([]string{"create", "update"}, rbacv1.GroupName, "roles"), rule([]string{"create"}, rbacv1.GroupName, "rolebindings")}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "node-reader"}, Rules: []rbacv1.PolicyRule{rule([]string{"get"}, "", "nodes")}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "escalator"}, Rules: []rbacv1.PolicyRule{rule([]string{"escalate"}, rbacv1.GroupName, "roles")}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "binder"}, Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"node-reader"}}}},
	})
	p.RoleBindings().Replace([]runtime.Object{
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "jane"}, Subjects: []rbacv1.Subject{u("jane"), u("esc"), u("bob")}, RoleRef: ref("ClusterRole", "pod-admin")},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "esc"}, Subjects: []rbacv1.Subject{u("esc")}, RoleRef: ref("ClusterRole", "escalator")},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bob"}, Subjects: []rbacv1.Subject{u("bob")}, RoleRef: ref("ClusterRole", "binder")},
	})
	chain := authorization.Chain([]string{authorization.ModeRBAC}, p, nil)
	as := func(name string, groups ...string) context.Context {
		u := authenticationv1.UserInfo{Username: name, Groups: append(groups, "system:authenticated")}
		return authorization.WithRequest(authentication.WithUser(context.Background(), u), chain, authorization.Attributes{User: u})
	}
	podRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r"}, Rules: []rbacv1.PolicyRule{rule([]string{"get", "delete"}, "", "pods")}}
	nodeRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r"}, Rules: []rbacv1.PolicyRule{rule([]string{"get", "list"}, "", "nodes")}}
	binding := func(role string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}, Subjects: []rbacv1.Subject{u("joe")}, RoleRef: ref("ClusterRole", role)}
	}
	tests := []struct {
		name string
		ctx  context.Context
		res  *apiserver.Resource
		obj  runtime.Object
		err  string // "" for allowed
	}{
		{"jane may write a Role with rules she holds", as("jane"), rbac.Roles, podRole, ""},
		{"but not one granting what she lacks, told which", as("jane"), rbac.Roles, nodeRole,
			`roles.rbac.authorization.k8s.io "r" is forbidden: user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` +
				"\n" + `{APIGroups:[""], Resources:["nodes"], Verbs:["get" "list"]}`},
		{"a user allowed to escalate may", as("esc"), rbac.Roles, nodeRole, ""},
		{"a master may write anything", as("kubernetes-admin", "system:masters"), rbac.Roles, nodeRole, ""},
		{"jane may bind a role she holds", as("jane"), rbac.RoleBindings, binding("pod-admin"), ""},
		{"but not one she lacks", as("jane"), rbac.RoleBindings, binding("node-reader"),
			`rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` +
				"\n" + `{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}`},
		{"a user allowed to bind that role may", as("bob"), rbac.RoleBindings, binding("node-reader"), ""},
		{"jane may not make a ClusterRole that aggregates, rules or none", as("jane"), rbac.ClusterRoles, &rbacv1.ClusterRole{
			ObjectMeta:      metav1.ObjectMeta{Name: "gatherer"},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}},
			`clusterroles.rbac.authorization.k8s.io "gatherer" is forbidden: must have cluster-admin privileges to use the aggregationRule`},
		{"a binding of a role that does not exist is refused", as("jane"), rbac.RoleBindings, binding("ghost"),
			`rolebindings.rbac.authorization.k8s.io "b" is forbidden: clusterrole.rbac.authorization.k8s.io "ghost" not found`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.res.Admit(tc.ctx, nil, tc.obj, nil)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err != "" && (!apierrors.IsForbidden(err) || strings.TrimSpace(err.Error()) != tc.err):
				t.Errorf("got %v\nwant 403 %s", err, tc.err)
			}
		})
	}
}
