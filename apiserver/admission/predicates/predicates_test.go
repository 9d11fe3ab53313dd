package predicates

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/apiserver/admission"
)

func rule(ops []admissionregistrationv1.OperationType, groups, versions, resources []string, scope admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{Operations: ops,
		Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources, Scope: &scope}}
}

var create = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}

func TestRulesMatchAsKubernetesMatchesThem(t *testing.T) {
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	tests := []struct {
		name string
		rule admissionregistrationv1.RuleWithOperations
		a    admission.Attributes
		want bool
	}{
		{"a rule for pods matches a pod's create", rule(create, []string{""}, []string{"v1"}, []string{"pods"}, "*"),
			admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "ns"}, true},
		{"a CREATE rule does not match an update", rule(create, []string{""}, []string{"v1"}, []string{"pods"}, "*"),
			admission.Attributes{Operation: admission.Update, Resource: pods, Namespace: "ns"}, false},
		{"'*' operations match a connect", rule([]admissionregistrationv1.OperationType{"*"}, []string{""}, []string{"v1"}, []string{"pods/attach"}, "*"),
			admission.Attributes{Operation: admission.Connect, Resource: pods, Subresource: "attach", Namespace: "ns"}, true},
		{"pods does not match pods/status", rule(create, []string{""}, []string{"v1"}, []string{"pods"}, "*"),
			admission.Attributes{Operation: admission.Create, Resource: pods, Subresource: "status", Namespace: "ns"}, false},
		{"pods/* matches pods/status", rule(create, []string{""}, []string{"v1"}, []string{"pods/*"}, "*"),
			admission.Attributes{Operation: admission.Create, Resource: pods, Subresource: "status", Namespace: "ns"}, true},
		{"*/* matches any subresource", rule(create, []string{"*"}, []string{"*"}, []string{"*/*"}, "*"),
			admission.Attributes{Operation: admission.Create, Resource: deployments, Subresource: "scale", Namespace: "ns"}, true},
		{"* matches no subresource", rule(create, []string{"*"}, []string{"*"}, []string{"*"}, "*"),
			admission.Attributes{Operation: admission.Create, Resource: deployments, Subresource: "scale", Namespace: "ns"}, false},
		{"the group must match", rule(create, []string{""}, []string{"v1"}, []string{"deployments"}, "*"),
			admission.Attributes{Operation: admission.Create, Resource: deployments, Namespace: "ns"}, false},
		{"Namespaced does not match a namespace", rule(create, []string{""}, []string{"v1"}, []string{"namespaces"}, "Namespaced"),
			admission.Attributes{Operation: admission.Create, Resource: Namespaces, Name: "ns"}, false},
		{"Cluster matches a namespace", rule(create, []string{""}, []string{"v1"}, []string{"namespaces"}, "Cluster"),
			admission.Attributes{Operation: admission.Create, Resource: Namespaces, Name: "ns"}, true},
		{"Cluster does not match a namespaced pod", rule(create, []string{""}, []string{"v1"}, []string{"pods"}, "Cluster"),
			admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "ns"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleMatches(tc.rule, &tc.a, tc.a.Resource); got != tc.want {
				t.Fatalf("matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAnObjectSelectorMatchesTheObjectOrTheOldOne(t *testing.T) {
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	db := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}}}
	tests := []struct {
		name string
		a    admission.Attributes
		want bool
	}{
		{"the object's labels", admission.Attributes{Object: web}, true},
		{"other labels", admission.Attributes{Object: db}, false},
		{"a delete has the old object only", admission.Attributes{OldObject: web}, true},
		{"a relabelling away still matches by the old labels", admission.Attributes{Object: db, OldObject: web}, true},
		{"a connect's options have no labels", admission.Attributes{Object: &corev1.PodAttachOptions{}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ObjectMatches(sel, &tc.a); got != tc.want {
				t.Fatalf("ObjectMatches = %v, want %v", got, tc.want)
			}
		})
	}
	if !ObjectMatches(labels.Everything(), &admission.Attributes{}) {
		t.Fatal("an empty selector matches everything")
	}
}
