package rbac

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver/authorization"
)

// seedPolicy is seed 003 §十二's objects: pod-reader bound to jane in
// default, secret-reader to dave in development and to the group manager
// everywhere; plus a binding of a role nobody created, and one to the
// default ServiceAccount of kube-system.
func seedPolicy() []runtime.Object {
	read := []string{"get", "watch", "list"}
	user := func(n string) rbacv1.Subject {
		return rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: n}
	}
	ref := func(kind, n string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: n}
	}
	return []runtime.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pod-reader"},
			Rules: []rbacv1.PolicyRule{{Verbs: read, APIGroups: []string{""}, Resources: []string{"pods"}}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "secret-reader"},
			Rules: []rbacv1.PolicyRule{{Verbs: read, APIGroups: []string{""}, Resources: []string{"secrets"}}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "node-reader"},
			Rules: []rbacv1.PolicyRule{{Verbs: read, APIGroups: []string{""}, Resources: []string{"nodes"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "read-pods"},
			Subjects: []rbacv1.Subject{user("jane")}, RoleRef: ref("Role", "pod-reader")},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "development", Name: "read-pods"},
			Subjects: []rbacv1.Subject{user("dave")}, RoleRef: ref("ClusterRole", "secret-reader")},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "read-secrets-global"},
			Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "manager"}}, RoleRef: ref("ClusterRole", "secret-reader")},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dangling"},
			Subjects: []rbacv1.Subject{user("eve")}, RoleRef: ref("Role", "never-created")},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "sa-reads-nodes"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kube-system", Name: "default"}}, RoleRef: ref("ClusterRole", "node-reader")},
	}
}

func fed(objs []runtime.Object) *Policy {
	p := NewPolicy()
	for _, obj := range objs {
		var f Feed
		switch obj.(type) {
		case *rbacv1.Role:
			f = p.Roles()
		case *rbacv1.ClusterRole:
			f = p.ClusterRoles()
		case *rbacv1.RoleBinding:
			f = p.RoleBindings()
		case *rbacv1.ClusterRoleBinding:
			f = p.ClusterRoleBindings()
		}
		f.Update(obj, nil)
	}
	return p
}

func who(name string, groups ...string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: name, Groups: append(groups, "system:authenticated")}
}

func in(ns string, a authorization.Attributes) authorization.Attributes { a.Namespace = ns; return a }

func as(u authenticationv1.UserInfo, a authorization.Attributes) authorization.Attributes {
	a.User = u
	return a
}

func TestAuthorize(t *testing.T) {
	p := fed(seedPolicy())
	listPods := resourceRequest("list", "", "pods", "", "")
	getSecret := resourceRequest("get", "", "secrets", "", "db")
	listSecretsEverywhere := in("", resourceRequest("list", "", "secrets", "", ""))
	tests := []struct {
		name   string
		a      authorization.Attributes
		want   authorization.Decision
		reason string
	}{
		{"jane may list pods in default, through her RoleBinding", as(who("jane"), listPods), authorization.Allow,
			`RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to User "jane"`},
		{"jane may not delete them", as(who("jane"), resourceRequest("delete", "", "pods", "", "web")), authorization.NoOpinion, ""},
		{"nor list pods in local: a RoleBinding grants only in its namespace", as(who("jane"), in("local", listPods)), authorization.NoOpinion, ""},
		{"nor list pods of every namespace", as(who("jane"), in("", listPods)), authorization.NoOpinion, ""},
		{"dave may read secrets in development, through a ClusterRole bound there", as(who("dave"), in("development", getSecret)), authorization.Allow,
			`RBAC: allowed by RoleBinding "read-pods/development" of ClusterRole "secret-reader" to User "dave"`},
		{"but not in default", as(who("dave"), getSecret), authorization.NoOpinion, ""},
		{"the group manager may list secrets of every namespace", as(who("alice", "manager"), listSecretsEverywhere), authorization.Allow,
			`RBAC: allowed by ClusterRoleBinding "read-secrets-global" of ClusterRole "secret-reader" to Group "manager"`},
		{"alice without the group may not", as(who("alice"), listSecretsEverywhere), authorization.NoOpinion, ""},
		{"a binding to a missing role says so in the reason", as(who("eve"), listPods), authorization.NoOpinion,
			`RBAC: role.rbac.authorization.k8s.io "never-created" not found`},
		{"a ServiceAccount subject is the user system:serviceaccount:<ns>:<name>",
			as(who("system:serviceaccount:kube-system:default"), in("", resourceRequest("list", "", "nodes", "", ""))), authorization.Allow,
			`RBAC: allowed by ClusterRoleBinding "sa-reads-nodes" of ClusterRole "node-reader" to ServiceAccount "default/kube-system"`},
		{"another namespace's default account is someone else",
			as(who("system:serviceaccount:default:default"), in("", resourceRequest("list", "", "nodes", "", ""))), authorization.NoOpinion, ""},
		{"nobody is bound to a path", as(who("jane"), pathRequest("get", "/healthz")), authorization.NoOpinion, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := p.Authorize(context.Background(), tc.a)
			if d != tc.want || reason != tc.reason || err != nil {
				t.Errorf("Authorize = %v, %q, %v; want %v, %q", d, reason, err, tc.want, tc.reason)
			}
		})
	}
}

func TestThePolicyFollowsChanges(t *testing.T) {
	objs := seedPolicy()
	p := fed(objs)
	jane := as(who("jane"), resourceRequest("list", "", "pods", "", ""))
	allowed := func() bool { d, _, _ := p.Authorize(context.Background(), jane); return d == authorization.Allow }
	binding := objs[3].(*rbacv1.RoleBinding)

	steps := []struct {
		name  string
		apply func()
		allow bool
	}{
		{"deleting jane's RoleBinding takes her right away", func() { p.RoleBindings().Update(nil, binding) }, false},
		{"creating it again gives it back", func() { p.RoleBindings().Update(binding, nil) }, true},
		{"a new version naming someone else unbinds her", func() {
			other := binding.DeepCopy()
			other.Subjects[0].Name = "joe"
			p.RoleBindings().Update(other, binding)
		}, false},
		{"a relist with the original restores her", func() { p.RoleBindings().Replace(objs[3:5]) }, true},
		{"deleting the Role leaves the binding pointing at nothing", func() { p.Roles().Update(nil, objs[0]) }, false},
		{"a relist of no roles keeps it that way", func() { p.Roles().Replace(nil) }, false},
		{"the Role coming back makes the binding work again", func() { p.Roles().Replace(objs[:1]) }, true},
	}
	for _, s := range steps {
		s.apply()
		if got := allowed(); got != s.allow {
			t.Fatalf("%s: jane may list pods: %v, want %v", s.name, got, s.allow)
		}
	}
}

func TestRulesForListsEachBindingOnce(t *testing.T) {
	p := fed(seedPolicy())
	// A binding naming alice both as a user and through her group.
	p.ClusterRoleBindings().Update(&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "twice"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}, {Kind: "Group", Name: "manager"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "node-reader"}}, nil)
	rules, incomplete, err := p.RulesFor(who("alice", "manager"), "default")
	if len(rules) != 2 || incomplete || err != nil {
		t.Fatalf("RulesFor(alice) = %v, %v, %v; want secret-reader's and node-reader's rule, once each", rules, incomplete, err)
	}
	if _, _, err := p.RulesFor(who("eve"), "default"); err == nil || err.Error() != `role.rbac.authorization.k8s.io "never-created" not found` {
		t.Errorf("RulesFor(eve): error %v, want the missing role", err)
	}
}

// A request RBAC does not allow, the common case for anyone but an
// administrator, costs map lookups and no allocation: nothing is listed.
func TestADeniedRequestAllocatesNothing(t *testing.T) {
	p := fed(seedPolicy())
	a := as(who("jane", "developers", "system:serviceaccounts"), resourceRequest("delete", "", "pods", "", "web"))
	if n := testing.AllocsPerRun(100, func() { p.Authorize(context.Background(), a) }); n != 0 {
		t.Errorf("Authorize allocates %v times per denied request, want 0", n)
	}
}
