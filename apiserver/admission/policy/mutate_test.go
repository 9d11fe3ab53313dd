package policy

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver/admission"
)

func mutatePolicy(mutations ...admissionregistrationv1.Mutation) *admissionregistrationv1.MutatingAdmissionPolicy {
	return &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "mutate"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			FailurePolicy:      ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"policed": "yes"}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
			Mutations: mutations}}
}

func applyConfig(expr string) admissionregistrationv1.Mutation {
	return admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: expr}}
}

// deploymentCreate is creating a Deployment, read back as the storage
// reads a body.
func deploymentCreate(ns string, replicas int32) *admission.Attributes {
	a := create(deployments, "Deployment", ns, replicas)
	a.Reread = func(b []byte) (runtime.Object, error) {
		d := &appsv1.Deployment{}
		return d, json.Unmarshal(b, d)
	}
	return a
}

func TestMutatingPoliciesChangeTheWritesTheyMatch(t *testing.T) {
	tests := []struct {
		name      string
		mutations []admissionregistrationv1.Mutation
		ns        string
		check     func(d *appsv1.Deployment) bool
		err       string
	}{
		{"an apply configuration adds an annotation", []admissionregistrationv1.Mutation{applyConfig(
			`Object{metadata: Object.metadata{annotations: {"mutated-by": "admission-policy"}}}`)}, "team",
			func(d *appsv1.Deployment) bool {
				return d.Annotations["mutated-by"] == "admission-policy" && *d.Spec.Replicas == 1
			}, ""},
		{"an apply configuration sets the replicas", []admissionregistrationv1.Mutation{applyConfig(`Object{spec: Object.spec{replicas: 1337}}`)}, "team",
			func(d *appsv1.Deployment) bool { return *d.Spec.Replicas == 1337 }, ""},
		{"mutations apply in order, each seeing the last", []admissionregistrationv1.Mutation{
			applyConfig(`Object{spec: Object.spec{replicas: 3}}`),
			{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{
				Expression: `[JSONPatch{op: "add", path: "/metadata/labels", value: {"replicas": string(object.spec.replicas)}}]`}}}, "team",
			func(d *appsv1.Deployment) bool { return d.Labels["replicas"] == "3" }, ""},
		{"another namespace is left alone", []admissionregistrationv1.Mutation{applyConfig(`Object{spec: Object.spec{replicas: 1337}}`)}, "free",
			func(d *appsv1.Deployment) bool { return *d.Spec.Replicas == 1 }, ""},
		{"a mutation that fails refuses the request", []admissionregistrationv1.Mutation{applyConfig(`Object{spec: Object.spec{replicas: 1 / (object.spec.replicas - 1)}}`)},
			"team", nil, "policy 'mutate' with binding 'mutate-binding' denied request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMutator(slog.New(slog.DiscardHandler))
			m.Policies().Update(mutatePolicy(tc.mutations...), nil)
			m.Bindings().Update(&admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "mutate-binding"},
				Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "mutate"}}, nil)
			a := deploymentCreate(tc.ns, 1)
			held := a.Object.(*appsv1.Deployment)
			err := m.Admit(context.Background(), a, cluster)
			if tc.err != "" {
				if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an Invalid error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(held) {
				t.Fatalf("the deployment after admission: %+v", held)
			}
		})
	}
}
