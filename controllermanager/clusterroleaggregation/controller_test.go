package clusterroleaggregation

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/testserver"
)

func clusterRole(name string, labels map[string]string, verbs ...string) *rbacv1.ClusterRole {
	r := &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	for _, v := range verbs {
		r.Rules = append(r.Rules, rbacv1.PolicyRule{Verbs: []string{v}, APIGroups: []string{""}, Resources: []string{"pods"}})
	}
	return r
}

func aggregated(name string, labels map[string]string, selectors ...map[string]string) *rbacv1.ClusterRole {
	r := clusterRole(name, labels)
	r.AggregationRule = &rbacv1.AggregationRule{}
	for _, s := range selectors {
		r.AggregationRule.ClusterRoleSelectors = append(r.AggregationRule.ClusterRoleSelectors, metav1.LabelSelector{MatchLabels: s})
	}
	return r
}

func verbsOf(rules []rbacv1.PolicyRule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.Verbs...)
	}
	return out
}

var toView = map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}

func TestAggregateUnitesTheMatchedRolesRulesOnceEachByName(t *testing.T) {
	view := aggregated("view", nil, toView)
	tests := []struct {
		name string
		all  []runtime.Object
		want []string
	}{
		{"no role matches: no rules", []runtime.Object{view, clusterRole("other", nil, "get")}, []string{}},
		{"the matched roles' rules, in the order of their names", []runtime.Object{view,
			clusterRole("z-role", toView, "watch"), clusterRole("a-role", toView, "get", "list")}, []string{"get", "list", "watch"}},
		{"a rule two roles share comes once", []runtime.Object{view,
			clusterRole("a", toView, "get"), clusterRole("b", toView, "get", "list")}, []string{"get", "list"}},
		{"a role never aggregates itself", []runtime.Object{aggregated("view", toView, toView), clusterRole("a", toView, "get")}, []string{"get"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := aggregate(tc.all[0].(*rbacv1.ClusterRole), tc.all)
			if err != nil {
				t.Fatal(err)
			}
			if got := verbsOf(rules); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rules' verbs %v, want %v", got, tc.want)
			}
		})
	}
}

// Against a real API server: edit aggregates view, which aggregates a
// role that appears later, and every change flows up. The server has
// Kubernetes' own edit and view, so the test's pair has names and labels
// of its own.
func TestAggregatedRolesFollowTheRolesTheySelect(t *testing.T) {
	c := client.New(testserver.Start(t), "test")
	ctx := context.Background()
	toEdit := map[string]string{"example.com/aggregate-to-team-edit": "true"}
	toView := map[string]string{"example.com/aggregate-to-team-view": "true"}
	for _, r := range []*rbacv1.ClusterRole{aggregated("team-edit", nil, toEdit), aggregated("team-view", toEdit, toView),
		clusterRole("editor-extra", toEdit, "create")} {
		if err := c.Create(ctx, ClusterRoles, "", r, nil); err != nil {
			t.Fatal(err)
		}
	}
	d := controller.NewDeps(c, slog.New(slog.DiscardHandler), nil)
	ctrl := New(d, Options{})
	testserver.Background(t, d.Run)
	testserver.Background(t, ctrl.Run)
	verbs := func(name string) []string {
		r := &rbacv1.ClusterRole{}
		if err := c.Get(ctx, ClusterRoles, "", name, r); err != nil {
			t.Fatal(err)
		}
		return verbsOf(r.Rules)
	}
	want := func(name string, v ...string) func() (bool, string) {
		return func() (bool, string) {
			got := verbs(name)
			return slices.Equal(got, v), fmt.Sprint(got)
		}
	}
	testserver.Eventually(t, "edit has editor-extra's rule; view has none yet", want("team-edit", "create"))
	if err := c.Create(ctx, ClusterRoles, "", clusterRole("pod-reader", toView, "get"), nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "a new role labelled aggregate-to-view goes into view", want("team-view", "get"))
	testserver.Eventually(t, "and through view into edit", want("team-edit", "create", "get"))
	if err := c.Delete(ctx, ClusterRoles, "", "pod-reader", nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "a deleted role's rules leave view", want("team-view"))
	testserver.Eventually(t, "and edit", want("team-edit", "create"))
}
