package bootstrappolicy

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEveryDefaultIsMarkedAndEveryBindingHasItsRole(t *testing.T) {
	roles := map[string]bool{}
	marked := func(kind string, m metav1.ObjectMeta) {
		if m.Labels[BootstrappingLabel] != BootstrappingValue || m.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("%s %s: labels %v, annotations %v; want kubernetes.io/bootstrapping=rbac-defaults and autoupdate true", kind, m.Name, m.Labels, m.Annotations)
		}
	}
	for _, r := range ClusterRoles() {
		marked("ClusterRole", r.ObjectMeta)
		if roles[r.Name] {
			t.Errorf("ClusterRole %s twice", r.Name)
		}
		roles[r.Name] = true
		for i, rule := range r.Rules {
			for _, list := range [][]string{rule.Verbs, rule.APIGroups, rule.Resources, rule.NonResourceURLs} {
				if !slices.IsSorted(list) {
					t.Errorf("ClusterRole %s rule %d: %v is not sorted, as Kubernetes' rule builder sorts", r.Name, i, list)
				}
			}
		}
	}
	for _, b := range ClusterRoleBindings() {
		marked("ClusterRoleBinding", b.ObjectMeta)
		if b.RoleRef.Kind != "ClusterRole" || !roles[b.RoleRef.Name] {
			t.Errorf("ClusterRoleBinding %s binds %s %s, which is not a default ClusterRole", b.Name, b.RoleRef.Kind, b.RoleRef.Name)
		}
	}
}

// admin is edit and more, edit is view and more: what aggregation would
// make of them.
func TestAdminEditViewNest(t *testing.T) {
	byName := map[string][]rbacv1.PolicyRule{}
	for _, r := range ClusterRoles() {
		byName[r.Name] = r.Rules
	}
	for _, pair := range [][2]string{{"admin", "edit"}, {"edit", "view"}} {
		outer, inner := byName[pair[0]], byName[pair[1]]
		for _, r := range inner {
			if !slices.ContainsFunc(outer, func(o rbacv1.PolicyRule) bool { return equalRules(o, r) }) {
				t.Errorf("%s lacks %s's rule %v", pair[0], pair[1], r)
			}
		}
		if len(outer) <= len(inner) {
			t.Errorf("%s has no rule of its own beyond %s's", pair[0], pair[1])
		}
	}
}

func equalRules(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.Verbs, b.Verbs) && slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) &&
		slices.Equal(a.ResourceNames, b.ResourceNames) && slices.Equal(a.NonResourceURLs, b.NonResourceURLs)
}
