package admissionregistration

import (
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func validValidating() *admissionregistrationv1.ValidatingWebhookConfiguration {
	c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "deny"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "deny.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://example.com/deny")},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}}}
	ValidatingWebhookConfigurations.Default(c)
	return c
}

func TestWebhookConfigurationsAreValidatedAsKubernetesDoes(t *testing.T) {
	tests := []struct {
		name   string
		change func(w *admissionregistrationv1.ValidatingWebhook)
		field  string
		detail string
	}{
		{"a defaulted webhook with a URL is valid", func(*admissionregistrationv1.ValidatingWebhook) {}, "", ""},
		{"a webhook's name has at least three segments", func(w *admissionregistrationv1.ValidatingWebhook) { w.Name = "deny" },
			"webhooks[0].name", "should be a domain with at least three segments separated by dots"},
		{"a new webhook must have no side effects", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome)
		}, "webhooks[0].sideEffects", `Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`},
		{"sideEffects is required", func(w *admissionregistrationv1.ValidatingWebhook) { w.SideEffects = nil },
			"webhooks[0].sideEffects", "must specify one of None, NoneOnDryRun"},
		{"the timeout is 1 to 30 seconds", func(w *admissionregistrationv1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](0) },
			"webhooks[0].timeoutSeconds", "the timeout value must be between 1 and 30 seconds"},
		{"url and service are exclusive", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.ClientConfig.Service = &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "hook"}
		}, "webhooks[0].clientConfig", "exactly one of url or service is required"},
		{"a URL is https", func(w *admissionregistrationv1.ValidatingWebhook) { w.ClientConfig.URL = ptr.To("http://example.com") },
			"webhooks[0].clientConfig.url", "'https' is the only allowed URL scheme"},
		{"a service path is absolute", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.ClientConfig.URL = nil
			w.ClientConfig.Service = &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "hook", Path: ptr.To("deny"), Port: ptr.To[int32](443)}
		}, "webhooks[0].clientConfig.service.path", "must start with a '/'"},
		{"an AdmissionReview version the server speaks is required", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.AdmissionReviewVersions = []string{"v2"}
		}, "webhooks[0].admissionReviewVersions", "must include at least one of v1, v1beta1"},
		{"operations are Kubernetes' five", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.Rules[0].Operations = []admissionregistrationv1.OperationType{"PATCH"}
		}, "webhooks[0].rules[0].operations[0]", `Unsupported value: "PATCH"`},
		{"'*/*' stands alone", func(w *admissionregistrationv1.ValidatingWebhook) { w.Rules[0].Resources = []string{"*/*", "pods"} },
			"webhooks[0].rules[0].resources", "if '*/*' is present, must not specify other resources"},
		{"'pods/*' covers pods/status", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.Rules[0].Resources = []string{"pods/*", "pods/status"}
		}, "webhooks[0].rules[0].resources[1]", "if 'pods/*' is present, must not specify pods/status"},
		{"a scope is one of three", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.Rules[0].Scope = ptr.To[admissionregistrationv1.ScopeType]("Global")
		}, "webhooks[0].rules[0].scope", `Unsupported value: "Global"`},
		{"a match condition must compile", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "bad", Expression: "... [] bad expression"}}
		}, "webhooks[0].matchConditions[0].expression", "compilation failed"},
		{"a match condition is boolean", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "name", Expression: "object.metadata.name"}}
		}, "webhooks[0].matchConditions[0].expression", "must evaluate to bool"},
		{"a match condition is named", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Expression: "true"}}
		}, "webhooks[0].matchConditions[0].name", "Required value"},
		{"a label selector is valid", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
		}, "webhooks[0].namespaceSelector.matchLabels", "name part must consist of"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validValidating()
			tc.change(&c.Webhooks[0])
			errs := ValidatingWebhookConfigurations.Validate(c, nil)
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Field == tc.field && strings.Contains(e.Error(), tc.detail) {
					return
				}
			}
			t.Fatalf("want an error on %s with %q, got %v", tc.field, tc.detail, errs)
		})
	}
}

func TestAnUpdateMayKeepWhatTheStoredConfigurationHad(t *testing.T) {
	old := validValidating()
	old.Webhooks[0].SideEffects = ptr.To(admissionregistrationv1.SideEffectClassUnknown) // stored by an older server
	next := old.DeepCopy()
	next.Labels = map[string]string{"edited": "yes"}
	if errs := ValidatingWebhookConfigurations.Validate(next, old); len(errs) > 0 {
		t.Fatalf("an update keeping sideEffects Unknown: %v", errs)
	}
	if errs := ValidatingWebhookConfigurations.Validate(next, nil); len(errs) == 0 {
		t.Fatal("a create with sideEffects Unknown was accepted")
	}
}

func TestTwoWebhooksOfOneConfigurationHaveTwoNames(t *testing.T) {
	c := validValidating()
	c.Webhooks = append(c.Webhooks, c.Webhooks[0])
	errs := ValidatingWebhookConfigurations.Validate(c, nil)
	if len(errs) != 1 || errs[0].Field != "webhooks[1].name" || !strings.Contains(errs[0].Error(), "Duplicate value") {
		t.Fatalf("got %v", errs)
	}
}

func TestWebhooksAreDefaultedAsKubernetesDoes(t *testing.T) {
	c := &admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{{
		Name:         "add.example.com",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "ns", Name: "svc"}},
		Rules:        []admissionregistrationv1.RuleWithOperations{{}},
	}}}
	MutatingWebhookConfigurations.Default(c)
	w := c.Webhooks[0]
	switch {
	case *w.FailurePolicy != admissionregistrationv1.Fail, *w.MatchPolicy != admissionregistrationv1.Equivalent,
		w.NamespaceSelector == nil, w.ObjectSelector == nil, *w.TimeoutSeconds != 10,
		*w.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy,
		*w.Rules[0].Scope != admissionregistrationv1.AllScopes, *w.ClientConfig.Service.Port != 443:
		t.Fatalf("defaults %+v", w)
	}
}

func TestPoliciesAreValidatedWithTheirExpressionsCompiled(t *testing.T) {
	rules := &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE"},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}}
	policy := func(expr string) runtime.Object {
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "replicas"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rules.DeepCopy(),
				Validations: []admissionregistrationv1.Validation{{Expression: expr}}}}
		ValidatingAdmissionPolicies.Default(p)
		return p
	}
	if errs := ValidatingAdmissionPolicies.Validate(policy("object.spec.replicas <= 100"), nil); len(errs) > 0 {
		t.Fatalf("a valid policy: %v", errs)
	}
	errs := ValidatingAdmissionPolicies.Validate(policy("object.spec.replicas <="), nil)
	if len(errs) != 1 || errs[0].Field != "spec.validations[0].expression" || !strings.Contains(errs[0].Error(), "compilation failed") {
		t.Fatalf("got %v", errs)
	}

	mp := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "label"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{MatchConstraints: rules.DeepCopy(),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: `Object{metadata: Object.metadata{labels: {"mutated": "yes"}}}`}}}}}
	MutatingAdmissionPolicies.Default(mp)
	if errs := MutatingAdmissionPolicies.Validate(mp, nil); len(errs) > 0 {
		t.Fatalf("a valid mutating policy: %v", errs)
	}
	mp.Spec.MatchConstraints.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{"DELETE"}
	errs = MutatingAdmissionPolicies.Validate(mp, nil)
	if len(errs) != 1 || errs[0].Field != "spec.matchConstraints.resourceRules.operations" {
		t.Fatalf("a mutating policy on DELETE: %v", errs)
	}

	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replicas",
			ValidationActions: []admissionregistrationv1.ValidationAction{"Deny", "Warn"}}}
	errs = ValidatingAdmissionPolicyBindings.Validate(b, nil)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "must not contain both Deny and Warn") {
		t.Fatalf("a binding that denies and warns: %v", errs)
	}
}

func TestKubectlGetShowsWebhooksAndPolicies(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	c := validValidating()
	c.CreationTimestamp = metav1.NewTime(now.Add(-90 * time.Second))
	if got := ValidatingWebhookConfigurations.Row(c, now); len(got) != 2 || got[0] != int64(1) || got[1] != "90s" {
		t.Fatalf("cells %v for columns %v", got, ValidatingWebhookConfigurations.Columns)
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now)},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: &admissionregistrationv1.ParamRef{Name: "cfg"}}}
	if got := ValidatingAdmissionPolicyBindings.Row(b, now); got[0] != "p" || got[1] != "*/cfg" {
		t.Fatalf("binding cells %v", got)
	}
}
