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

// admin is edit and more, edit is view and more, once aggregation has
// filled them from the roles labelled to go into them (as the
// clusterrole-aggregation controller does, until nothing changes).
func TestAdminEditViewAggregateAndNest(t *testing.T) {
	roles := map[string]*rbacv1.ClusterRole{}
	for _, r := range ClusterRoles() {
		roles[r.Name] = &r
	}
	for _, name := range []string{"admin", "edit", "view"} {
		if r := roles[name]; r.AggregationRule == nil || len(r.Rules) != 0 {
			t.Fatalf("%s: aggregationRule %v, %d rules; want an aggregationRule and no rules of its own", name, r.AggregationRule, len(r.Rules))
		}
	}
	for range 3 { // view into edit into admin: three rounds suffice
		for _, name := range []string{"admin", "edit", "view"} {
			var filled []rbacv1.PolicyRule
			for _, other := range ClusterRoles() {
				if other.Labels[AggregateLabel(name)] == "true" {
					for _, r := range roles[other.Name].Rules {
						if !slices.ContainsFunc(filled, func(o rbacv1.PolicyRule) bool { return equalRules(o, r) }) {
							filled = append(filled, r)
						}
					}
				}
			}
			roles[name].Rules = filled
		}
	}
	for _, pair := range [][2]string{{"admin", "edit"}, {"edit", "view"}} {
		outer, inner := roles[pair[0]].Rules, roles[pair[1]].Rules
		for _, r := range inner {
			if !slices.ContainsFunc(outer, func(o rbacv1.PolicyRule) bool { return equalRules(o, r) }) {
				t.Errorf("%s lacks %s's rule %v", pair[0], pair[1], r)
			}
		}
		if len(outer) <= len(inner) || len(inner) == 0 {
			t.Errorf("%s has %d rules, %s %d: want %s to have rules and %s more", pair[0], len(outer), pair[1], len(inner), pair[1], pair[0])
		}
	}
}

// Each controller mkube runs holds the role Kubernetes gives its service
// account, bound to that account in kube-system.
func TestEveryControllerHasItsRoleBoundToItsServiceAccount(t *testing.T) {
	bindings := map[string]rbacv1.ClusterRoleBinding{}
	for _, b := range ClusterRoleBindings() {
		bindings[b.Name] = b
	}
	for controller, sa := range ControllerServiceAccounts {
		b, ok := bindings[ControllerRolePrefix+sa]
		if !ok {
			t.Errorf("controller %s: no binding %s%s", controller, ControllerRolePrefix, sa)
			continue
		}
		if len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.ServiceAccountKind || b.Subjects[0].Name != sa || b.Subjects[0].Namespace != "kube-system" {
			t.Errorf("controller %s: binding subjects %+v, want the service account kube-system/%s", controller, b.Subjects, sa)
		}
	}
}

func equalRules(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.Verbs, b.Verbs) && slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) &&
		slices.Equal(a.ResourceNames, b.ResourceNames) && slices.Equal(a.NonResourceURLs, b.NonResourceURLs)
}
