package admissionregistration

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/webhook"
)

// webhook is what a mutating and a validating webhook have in common,
// the part Kubernetes' validateValidatingWebhook and
// validateMutatingWebhook check alike; reinvocation is nil for a
// validating one.
type webhookFields struct {
	name                    string
	rules                   []admissionregistrationv1.RuleWithOperations
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	matchPolicy             *admissionregistrationv1.MatchPolicyType
	sideEffects             *admissionregistrationv1.SideEffectClass
	timeoutSeconds          *int32
	namespaceSelector       *metav1.LabelSelector
	objectSelector          *metav1.LabelSelector
	clientConfig            admissionregistrationv1.WebhookClientConfig
	matchConditions         []admissionregistrationv1.MatchCondition
	admissionReviewVersions []string
	reinvocation            *admissionregistrationv1.ReinvocationPolicyType
}

func validatingFields(ws []admissionregistrationv1.ValidatingWebhook) []webhookFields {
	out := make([]webhookFields, len(ws))
	for i, w := range ws {
		out[i] = webhookFields{w.Name, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds,
			w.NamespaceSelector, w.ObjectSelector, w.ClientConfig, w.MatchConditions, w.AdmissionReviewVersions, nil}
	}
	return out
}

func mutatingFields(ws []admissionregistrationv1.MutatingWebhook) []webhookFields {
	out := make([]webhookFields, len(ws))
	for i, w := range ws {
		out[i] = webhookFields{w.Name, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds,
			w.NamespaceSelector, w.ObjectSelector, w.ClientConfig, w.MatchConditions, w.AdmissionReviewVersions, w.ReinvocationPolicy}
	}
	return out
}

func validateValidatingWebhookConfiguration(c, old *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	var prev []webhookFields
	if old != nil {
		prev = validatingFields(old.Webhooks)
	}
	return validateWebhooks(validatingFields(c.Webhooks), prev, old != nil)
}

func validateMutatingWebhookConfiguration(c, old *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	var prev []webhookFields
	if old != nil {
		prev = mutatingFields(old.Webhooks)
	}
	return validateWebhooks(mutatingFields(c.Webhooks), prev, old != nil)
}

// webhookOptions are Kubernetes' validationOptions for webhooks: a new
// configuration must meet today's rules, but an update may keep what an
// older API server let the stored configuration have (side effects
// Unknown or Some, an AdmissionReview version this server does not know,
// two webhooks of one name, a selector value no longer valid), so that
// it can still be edited.
type webhookOptions struct {
	ignoreMatchConditions          bool
	requireNoSideEffects           bool
	requireRecognizedReviewVersion bool
	requireUniqueNames             bool
	allowInvalidLabelValue         bool
	storedExpressions              sets.Set[string] // match conditions the old object had: compiled as stored
}

func optionsFor(prev []webhookFields, update bool, next []webhookFields) webhookOptions {
	if !update {
		return webhookOptions{requireNoSideEffects: true, requireRecognizedReviewVersion: true, requireUniqueNames: true}
	}
	opts := webhookOptions{requireNoSideEffects: true, requireRecognizedReviewVersion: true, requireUniqueNames: true,
		ignoreMatchConditions: len(next) == len(prev), storedExpressions: sets.New[string]()}
	names := sets.New[string]()
	for i, w := range prev {
		if w.sideEffects == nil || !noSideEffectClasses.Has(string(*w.sideEffects)) {
			opts.requireNoSideEffects = false
		}
		if len(w.admissionReviewVersions) > 0 && !slices.ContainsFunc(w.admissionReviewVersions, isAcceptedReviewVersion) {
			opts.requireRecognizedReviewVersion = false
		}
		if names.Has(w.name) {
			opts.requireUniqueNames = false
		}
		names.Insert(w.name)
		for _, sel := range []*metav1.LabelSelector{w.namespaceSelector, w.objectSelector} {
			if sel != nil && len(metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
				opts.allowInvalidLabelValue = true
			}
		}
		if opts.ignoreMatchConditions && !reflect.DeepEqual(next[i].matchConditions, w.matchConditions) {
			opts.ignoreMatchConditions = false
		}
		for _, mc := range w.matchConditions {
			opts.storedExpressions.Insert(mc.Expression)
		}
	}
	return opts
}

func validateWebhooks(hooks, prev []webhookFields, update bool) field.ErrorList {
	opts := optionsFor(prev, update, hooks)
	var errs field.ErrorList
	names := sets.New[string]()
	for i, w := range hooks {
		path := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateWebhook(w, opts, path)...)
		errs = append(errs, validateAdmissionReviewVersions(w.admissionReviewVersions, opts.requireRecognizedReviewVersion,
			path.Child("admissionReviewVersions"))...)
		if opts.requireUniqueNames && w.name != "" {
			if names.Has(w.name) {
				errs = append(errs, field.Duplicate(path.Child("name"), w.name))
			}
			names.Insert(w.name)
		}
	}
	return errs
}

var (
	supportedFailurePolicies = sets.New(string(admissionregistrationv1.Ignore), string(admissionregistrationv1.Fail))
	supportedMatchPolicies   = sets.New(string(admissionregistrationv1.Exact), string(admissionregistrationv1.Equivalent))
	supportedSideEffects     = sets.New(string(admissionregistrationv1.SideEffectClassUnknown), string(admissionregistrationv1.SideEffectClassNone),
		string(admissionregistrationv1.SideEffectClassSome), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	noSideEffectClasses = sets.New(string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun))
	supportedOperations = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create),
		string(admissionregistrationv1.Update), string(admissionregistrationv1.Delete), string(admissionregistrationv1.Connect))
	supportedReinvocation = sets.New(string(admissionregistrationv1.NeverReinvocationPolicy), string(admissionregistrationv1.IfNeededReinvocationPolicy))
	supportedScopes       = sets.New(string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope),
		string(admissionregistrationv1.AllScopes))
)

// acceptedReviewVersions are the AdmissionReview versions this API
// server sends (webhook.go, review.go), in Kubernetes' order.
var acceptedReviewVersions = []string{"v1", "v1beta1"}

func isAcceptedReviewVersion(v string) bool { return slices.Contains(acceptedReviewVersions, v) }

func validateWebhook(w webhookFields, opts webhookOptions, path *field.Path) field.ErrorList {
	// The name is fully qualified (at least three segments:
	// "deny-unwanted-configmap-data.k8s.io"), so that two teams' webhooks
	// cannot share one.
	errs := utilvalidation.IsFullyQualifiedName(path.Child("name"), w.name)
	for i := range w.rules {
		errs = append(errs, validateRuleWithOperations(&w.rules[i], path.Child("rules").Index(i))...)
	}
	if w.failurePolicy != nil && !supportedFailurePolicies.Has(string(*w.failurePolicy)) {
		errs = append(errs, field.NotSupported(path.Child("failurePolicy"), *w.failurePolicy, sets.List(supportedFailurePolicies)))
	}
	if w.matchPolicy != nil && !supportedMatchPolicies.Has(string(*w.matchPolicy)) {
		errs = append(errs, field.NotSupported(path.Child("matchPolicy"), *w.matchPolicy, sets.List(supportedMatchPolicies)))
	}
	// A webhook with side effects cannot be called on a dry run; since
	// v1, a new one must say it has none.
	allowedSideEffects := supportedSideEffects
	if opts.requireNoSideEffects {
		allowedSideEffects = noSideEffectClasses
	}
	switch {
	case w.sideEffects == nil:
		errs = append(errs, field.Required(path.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(sets.List(allowedSideEffects), ", "))))
	case !allowedSideEffects.Has(string(*w.sideEffects)):
		errs = append(errs, field.NotSupported(path.Child("sideEffects"), *w.sideEffects, sets.List(allowedSideEffects)))
	}
	if t := w.timeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		errs = append(errs, field.Invalid(path.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValue}
	if w.namespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(w.namespaceSelector, selectorOpts, path.Child("namespaceSelector"))...)
	}
	if w.objectSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(w.objectSelector, selectorOpts, path.Child("objectSelector"))...)
	}
	if w.reinvocation != nil && !supportedReinvocation.Has(string(*w.reinvocation)) {
		errs = append(errs, field.NotSupported(path.Child("reinvocationPolicy"), *w.reinvocation, sets.List(supportedReinvocation)))
	}
	cc, ccPath := w.clientConfig, path.Child("clientConfig")
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(ccPath, "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, webhook.ValidateWebhookURL(ccPath.Child("url"), *cc.URL, true)...)
	default:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		errs = append(errs, webhook.ValidateWebhookService(ccPath.Child("service"), cc.Service.Name, cc.Service.Namespace, cc.Service.Path, port)...)
	}
	if !opts.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(w.matchConditions, false, opts.storedExpressions, path.Child("matchConditions"))...)
	}
	return errs
}

// validateAdmissionReviewVersions: the webhook names the AdmissionReview
// versions it understands, in its order of preference; the API server
// sends the first it knows.
func validateAdmissionReviewVersions(versions []string, requireRecognized bool, path *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(path, fmt.Sprintf("must specify one of %v", strings.Join(acceptedReviewVersions, ", ")))}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Invalid(path.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(path.Index(i), v, msg))
		}
	}
	if requireRecognized && !slices.ContainsFunc(versions, isAcceptedReviewVersion) {
		errs = append(errs, field.Invalid(path, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedReviewVersions, ", "))))
	}
	return errs
}

func validateRuleWithOperations(r *admissionregistrationv1.RuleWithOperations, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	ops := path.Child("operations")
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(ops, ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, admissionregistrationv1.OperationAll) {
		errs = append(errs, field.Invalid(ops, r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !supportedOperations.Has(string(op)) {
			errs = append(errs, field.NotSupported(ops.Index(i), op, sets.List(supportedOperations)))
		}
	}
	return append(errs, validateRule(&r.Rule, path, true)...)
}

// validateRule checks a rule's groups, versions, resources and scope.
// Resources may name subresources ("pods/status", "*/scale", "pods/*"):
// a wildcard on either side must not be repeated by a narrower entry.
func validateRule(r *admissionregistrationv1.Rule, path *field.Path, allowSubresources bool) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(path.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(path.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(path.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(path.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(path.Child("apiVersions").Index(i), ""))
		}
	}
	if allowSubresources {
		errs = append(errs, validateResources(r.Resources, path.Child("resources"))...)
	} else {
		errs = append(errs, validateResourcesNoSubresources(r.Resources, path.Child("resources"))...)
	}
	if r.Scope != nil && !supportedScopes.Has(string(*r.Scope)) {
		errs = append(errs, field.NotSupported(path.Child("scope"), *r.Scope, sets.List(supportedScopes)))
	}
	return errs
}

func validateResources(resources []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(path, ""))
	}
	wildSubOf := sets.New[string]() // x/*
	wildResOf := sets.New[string]() // */x
	doubleWild, singleWild, plain := false, false, false
	for i, rs := range resources {
		if rs == "" {
			errs = append(errs, field.Required(path.Index(i), ""))
			continue
		}
		doubleWild = doubleWild || rs == "*/*"
		singleWild = singleWild || rs == "*"
		res, sub, hasSub := strings.Cut(rs, "/")
		if !hasSub {
			plain = rs != "*"
			continue
		}
		if wildSubOf.Has(res) {
			errs = append(errs, field.Invalid(path.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if wildResOf.Has(sub) {
			errs = append(errs, field.Invalid(path.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			wildSubOf.Insert(res)
		}
		if res == "*" {
			wildResOf.Insert(sub)
		}
	}
	if len(resources) > 1 && doubleWild {
		errs = append(errs, field.Invalid(path, resources, "if '*/*' is present, must not specify other resources"))
	}
	if singleWild && plain {
		errs = append(errs, field.Invalid(path, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

func validateResourcesNoSubresources(resources []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(path, ""))
	}
	for i, r := range resources {
		if r == "" {
			errs = append(errs, field.Required(path.Index(i), ""))
		}
		if strings.Contains(r, "/") {
			errs = append(errs, field.Invalid(path.Index(i), r, "must not specify subresources"))
		}
	}
	if len(resources) > 1 && slices.Contains(resources, "*") {
		errs = append(errs, field.Invalid(path, resources, "if '*' is present, must not specify other resources"))
	}
	return errs
}
