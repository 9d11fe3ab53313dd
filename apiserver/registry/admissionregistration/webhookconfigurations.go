package admissionregistration

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

// webhookColumns are `kubectl get validatingwebhookconfigurations`'
// columns: NAME, WEBHOOKS (how many the configuration has) and AGE.
var webhookColumns = []apiserver.Column{{Name: "Webhooks", Type: "integer"}, {Name: "Age", Type: "string"}}

// MutatingWebhookConfigurations name the webhooks that may change an
// object before it is stored (MutatingAdmissionWebhook).
var MutatingWebhookConfigurations = &apiserver.Resource{
	GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "mutatingwebhookconfigurations",
	Kind:    "MutatingWebhookConfiguration",
	New:     func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
	NewList: func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
	Default: func(obj runtime.Object) {
		for i := range obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks {
			DefaultMutatingWebhook(&obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks[i])
		}
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		var prev *admissionregistrationv1.MutatingWebhookConfiguration
		if old != nil {
			prev = old.(*admissionregistrationv1.MutatingWebhookConfiguration)
		}
		return validateMutatingWebhookConfiguration(obj.(*admissionregistrationv1.MutatingWebhookConfiguration), prev)
	},
	Columns: webhookColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		c := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
		return []any{int64(len(c.Webhooks)), apiserver.Age(c.CreationTimestamp, now)}
	},
}

// ValidatingWebhookConfigurations name the webhooks that judge an object,
// once it is valid, before it is stored (ValidatingAdmissionWebhook).
var ValidatingWebhookConfigurations = &apiserver.Resource{
	GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "validatingwebhookconfigurations",
	Kind:    "ValidatingWebhookConfiguration",
	New:     func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
	NewList: func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
	Default: func(obj runtime.Object) {
		for i := range obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks {
			DefaultValidatingWebhook(&obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[i])
		}
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		var prev *admissionregistrationv1.ValidatingWebhookConfiguration
		if old != nil {
			prev = old.(*admissionregistrationv1.ValidatingWebhookConfiguration)
		}
		return validateValidatingWebhookConfiguration(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration), prev)
	},
	Columns: webhookColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		c := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
		return []any{int64(len(c.Webhooks)), apiserver.Age(c.CreationTimestamp, now)}
	},
}

// DefaultValidatingWebhook is Kubernetes' SetDefaults_ValidatingWebhook
// and the defaults of what it holds: a webhook that cannot be called
// fails the request (failurePolicy Fail), matches a request for any
// version of its resources (matchPolicy Equivalent), every namespace and
// object (empty selectors), waits 10 s, and its rules match both scopes
// and a service's port 443.
func DefaultValidatingWebhook(w *admissionregistrationv1.ValidatingWebhook) {
	defaultCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
	defaultRulesAndService(w.Rules, w.ClientConfig.Service)
}

// DefaultMutatingWebhook is SetDefaults_MutatingWebhook: a validating
// webhook's defaults, and reinvocationPolicy Never (called once).
func DefaultMutatingWebhook(w *admissionregistrationv1.MutatingWebhook) {
	defaultCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
	if w.ReinvocationPolicy == nil {
		w.ReinvocationPolicy = ptr.To(admissionregistrationv1.NeverReinvocationPolicy)
	}
	defaultRulesAndService(w.Rules, w.ClientConfig.Service)
}

func defaultCommon(failure **admissionregistrationv1.FailurePolicyType, match **admissionregistrationv1.MatchPolicyType,
	ns, obj **metav1.LabelSelector, timeout **int32) {
	if *failure == nil {
		*failure = ptr.To(admissionregistrationv1.Fail)
	}
	if *match == nil {
		*match = ptr.To(admissionregistrationv1.Equivalent)
	}
	if *ns == nil {
		*ns = &metav1.LabelSelector{}
	}
	if *obj == nil {
		*obj = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = ptr.To[int32](10)
	}
}

func defaultRulesAndService(rules []admissionregistrationv1.RuleWithOperations, svc *admissionregistrationv1.ServiceReference) {
	for i := range rules {
		defaultRule(&rules[i].Rule)
	}
	if svc != nil && svc.Port == nil {
		svc.Port = ptr.To[int32](443)
	}
}

// defaultRule is SetDefaults_Rule: a rule without a scope matches both
// namespaced and cluster-scoped resources ("*").
func defaultRule(r *admissionregistrationv1.Rule) {
	if r.Scope == nil {
		r.Scope = ptr.To(admissionregistrationv1.AllScopes)
	}
}
