package policy

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/admission/predicates"
)

type fakeCluster struct{ namespaces map[string]*corev1.Namespace }

func (f fakeCluster) Get(_ context.Context, gvr schema.GroupVersionResource, _, name string) (runtime.Object, error) {
	if ns, ok := f.namespaces[name]; ok && gvr == predicates.Namespaces {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}
func (fakeCluster) List(context.Context, schema.GroupVersionResource, string) ([]runtime.Object, error) {
	return nil, nil
}
func (fakeCluster) Equivalents(schema.GroupVersionResource, string) []predicates.Equivalent {
	return nil
}

var (
	deployments = appsv1.SchemeGroupVersion.WithResource("deployments")
	replicaSets = appsv1.SchemeGroupVersion.WithResource("replicasets")
	cluster     = fakeCluster{namespaces: map[string]*corev1.Namespace{
		"team": {ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"policed": "yes"}}},
		"free": {ObjectMeta: metav1.ObjectMeta{Name: "free"}},
	}}
)

// replicasPolicy refuses deployments of fewer than 2 replicas, in the
// namespace "team" only (as the conformance test's does).
func replicasPolicy(change func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "replicas"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
			Variables: []admissionregistrationv1.Variable{{Name: "replicas", Expression: "object.spec.replicas"}},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "variables.replicas > 1", MessageExpression: "'wants replicas > 1, got ' + string(object.spec.replicas)"},
				{Expression: "namespaceObject.metadata.name == 'team'", Message: "other namespace"},
			}}}
	if change != nil {
		change(&p.Spec)
	}
	return p
}

func replicasBinding(actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "replicas-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replicas", ValidationActions: actions,
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"policed": "yes"}}}}}
}

func create(gvr schema.GroupVersionResource, kind, ns string, replicas int32) *admission.Attributes {
	var obj runtime.Object = &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
	if kind == "ReplicaSet" {
		obj = &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: kind},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.ReplicaSetSpec{Replicas: &replicas}}
	}
	return &admission.Attributes{Operation: admission.Create, Resource: gvr, Namespace: ns, Name: "web",
		Kind: appsv1.SchemeGroupVersion.WithKind(kind), Object: obj, Options: &metav1.CreateOptions{}}
}

func TestBoundPoliciesJudgeTheWritesTheyMatch(t *testing.T) {
	tests := []struct {
		name    string
		policy  *admissionregistrationv1.ValidatingAdmissionPolicy
		binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
		a       *admission.Attributes
		err     string // "" admits
		warning string
	}{
		{"a deployment of one replica is refused in Kubernetes' words", replicasPolicy(nil), replicasBinding("Deny"),
			create(deployments, "Deployment", "team", 1),
			`deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: wants replicas > 1, got 1`, ""},
		{"two replicas pass", replicasPolicy(nil), replicasBinding("Deny"), create(deployments, "Deployment", "team", 2), "", ""},
		{"a ReplicaSet is not what the policy matches", replicasPolicy(nil), replicasBinding("Deny"), create(replicaSets, "ReplicaSet", "team", 1), "", ""},
		{"the binding's namespaceSelector leaves other namespaces alone", replicasPolicy(nil), replicasBinding("Deny"),
			create(deployments, "Deployment", "free", 1), "", ""},
		{"a Warn binding warns instead", replicasPolicy(nil), replicasBinding("Warn"), create(deployments, "Deployment", "team", 1), "",
			"Validation failed for ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding': wants replicas > 1, got 1"},
		{"an unbound policy does nothing", replicasPolicy(nil), nil, create(deployments, "Deployment", "team", 1), "", ""},
		{"a false match condition skips the policy", replicasPolicy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-web", Expression: "object.metadata.name != 'web'"}}
		}), replicasBinding("Deny"), create(deployments, "Deployment", "team", 1), "", ""},
		{"a policy with parameters fails closed, mkube not reading them", replicasPolicy(func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		}), replicasBinding("Deny"), create(deployments, "Deployment", "team", 5), "failed to configure binding: mkube does not read the parameters", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New(slog.New(slog.DiscardHandler))
			e.Policies().Update(tc.policy, nil)
			if tc.binding != nil {
				e.Bindings().Update(tc.binding, nil)
			}
			var warnings []string
			ctx := admission.WithWarnings(context.Background(), func(w string) { warnings = append(warnings, w) })
			err := e.Validate(ctx, tc.a, cluster)
			if tc.err == "" && err != nil {
				t.Fatalf("want admitted, got %v", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !apierrors.IsInvalid(err)) {
				t.Fatalf("got %v, want an Invalid error containing %q", err, tc.err)
			}
			if tc.warning != "" && (len(warnings) != 1 || warnings[0] != tc.warning) {
				t.Fatalf("warnings %q, want %q", warnings, tc.warning)
			}
		})
	}
}

func TestADeletedBindingUnbindsItsPolicy(t *testing.T) {
	e := New(slog.New(slog.DiscardHandler))
	e.Policies().Replace([]runtime.Object{replicasPolicy(nil)})
	b := replicasBinding("Deny")
	e.Bindings().Replace([]runtime.Object{b})
	if err := e.Validate(context.Background(), create(deployments, "Deployment", "team", 1), cluster); err == nil {
		t.Fatal("the bound policy admitted one replica")
	}
	e.Bindings().Update(nil, b)
	if err := e.Validate(context.Background(), create(deployments, "Deployment", "team", 1), cluster); err != nil {
		t.Fatalf("with its binding deleted: %v", err)
	}
}
