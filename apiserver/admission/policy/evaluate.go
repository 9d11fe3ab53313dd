package policy

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/admission/predicates"
	"github.com/mkube/mkube/apiserver/authentication"
)

// Follower is what the API server feeds a kind into (apiserver.Follower).
type Follower interface {
	Replace(objs []runtime.Object)
	Update(obj, prev runtime.Object)
}

// Evaluator evaluates the bound ValidatingAdmissionPolicies it is fed.
type Evaluator struct {
	src *source
	log *slog.Logger
}

// New is an evaluator without policies; feed it with Server.Follow(ctx,
// validatingadmissionpolicies, e.Policies()) and the same for bindings.
func New(log *slog.Logger) *Evaluator {
	if log == nil {
		log = slog.Default()
	}
	return &Evaluator{src: newSource(), log: log}
}

// Policies is where the ValidatingAdmissionPolicies go.
func (e *Evaluator) Policies() Follower { return policyFollower{e.src} }

// Bindings is where the ValidatingAdmissionPolicyBindings go.
func (e *Evaluator) Bindings() Follower { return bindingFollower{e.src} }

// exemptKinds are never judged by policies, as they are never sent to
// webhooks: a policy that refuses everything could not be deleted.
var exemptKinds = sets.New("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
	"ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding")

// denial is one failed validation that a binding says Deny to.
type denial struct {
	policy, binding string
	message         string
	reason          metav1.StatusReason
}

// Validate evaluates every bound policy that matches a; the first
// denial refuses the request, in Kubernetes' words.
func (e *Evaluator) Validate(ctx context.Context, a *admission.Attributes, c predicates.Cluster) error {
	if a.Kind.Group == admissionregistrationv1.GroupName && exemptKinds.Has(a.Kind.Kind) {
		return nil
	}
	policies := e.src.list()
	if len(policies) == 0 {
		return nil
	}
	user, _ := authentication.UserFrom(ctx)
	ns := &predicates.NamespaceReader{Cluster: c, A: a}
	var denied []denial
	// A policy or binding that cannot be applied fails the request if the
	// policy's failurePolicy is Fail, as Kubernetes' addConfigError.
	configError := func(p *compiled, b *binding, err error) {
		if p.policy.Spec.FailurePolicy != nil && *p.policy.Spec.FailurePolicy == admissionregistrationv1.Ignore {
			return
		}
		d := denial{policy: p.policy.Name, message: fmt.Sprintf("failed to configure policy: %v", err)}
		if b != nil {
			d.binding, d.message = b.b.Name, fmt.Sprintf("failed to configure binding: %v", err)
		}
		denied = append(denied, d)
	}
	for _, p := range policies {
		gvr, kind, ok, err := p.match.matches(ctx, a, ns, c)
		if err != nil {
			configError(p.compiled, nil, err)
			continue
		}
		if !ok {
			continue
		}
		for _, b := range p.bindings {
			if b.match != nil {
				if _, _, ok, err := b.match.matches(ctx, a, ns, c); err != nil {
					configError(p.compiled, b, err)
					continue
				} else if !ok {
					continue
				}
			}
			if pk := p.policy.Spec.ParamKind; pk != nil {
				configError(p.compiled, b, fmt.Errorf("mkube does not read the parameters of policies (paramKind %s/%s)", pk.APIVersion, pk.Kind))
				continue
			}
			va, err := predicates.CELAttributes(a, kind, user)
			if err != nil {
				configError(p.compiled, b, err)
				continue
			}
			namespace, err := ns.Get(ctx)
			if a.Kind.Group == "" && a.Kind.Kind == "Namespace" {
				namespace, err = nil, nil // a namespace has itself as namespace; its policies see none
			}
			if err != nil {
				return err
			}
			result := p.validator.Validate(ctx, gvr, va, nil, namespace, celconfig.RuntimeCELCostBudget, nil)
			for _, d := range result.Decisions {
				if d.Action != validatingpolicy.ActionDeny {
					continue
				}
				e.log.Info("admission policy validation failed", "policy", p.policy.Name, "binding", b.b.Name,
					"resource", gvr.String(), "object", predicates.Namespace(a)+"/"+a.Name, "actions", b.b.Spec.ValidationActions, "message", d.Message)
				if slices.Contains(b.b.Spec.ValidationActions, admissionregistrationv1.Deny) {
					denied = append(denied, denial{policy: p.policy.Name, binding: b.b.Name, message: d.Message, reason: d.Reason})
				}
				if slices.Contains(b.b.Spec.ValidationActions, admissionregistrationv1.Warn) {
					admission.Warn(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.policy.Name, b.b.Name, d.Message))
				}
			}
			for _, an := range result.AuditAnnotations {
				if an.Action == validatingpolicy.AuditAnnotationActionError {
					denied = append(denied, denial{policy: p.policy.Name, binding: b.b.Name, message: an.Error})
				}
			}
		}
	}
	if len(denied) == 0 {
		return nil
	}
	return denialError(a, denied[0])
}

// denialError is Kubernetes' refusal: a Forbidden about the object, with
// the validation's reason (Invalid unless it names one) and its code.
//
//	deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'b' denied request: ...
func denialError(a *admission.Attributes, d denial) error {
	message := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	if d.binding == "" {
		message = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy, d.message)
	}
	err := apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("%s", message))
	reason := d.reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	err.ErrStatus.Reason = reason
	err.ErrStatus.Code = reasonCode(reason)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Message: message})
	return err
}

func reasonCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusUnprocessableEntity
}

// matches is a MatchResources against the request: the namespace and
// object selectors, no excluded rule, and a resource rule (with its
// resourceNames) that matches the request, or, with matchPolicy
// Equivalent, an equivalent version of it; none to match is a match. It
// returns what matched.
func (m *matcher) matches(ctx context.Context, a *admission.Attributes, ns *predicates.NamespaceReader, c predicates.Cluster) (schema.GroupVersionResource, schema.GroupVersionKind, bool, error) {
	none := func(err error) (schema.GroupVersionResource, schema.GroupVersionKind, bool, error) {
		return schema.GroupVersionResource{}, schema.GroupVersionKind{}, false, err
	}
	if m.err != nil {
		return none(m.err)
	}
	if ok, err := ns.Matches(ctx, m.namespaceSelector); err != nil || !ok {
		return none(err)
	}
	if !predicates.ObjectMatches(m.objectSelector, a) {
		return none(nil)
	}
	if m.m == nil {
		return a.Resource, a.Kind, true, nil
	}
	named := func(r admissionregistrationv1.NamedRuleWithOperations, gvr schema.GroupVersionResource) bool {
		return predicates.RuleMatches(r.RuleWithOperations, a, gvr) && (len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, a.Name))
	}
	for _, r := range m.m.ExcludeResourceRules {
		if named(r, a.Resource) {
			return none(nil)
		}
	}
	if len(m.m.ResourceRules) == 0 { // a binding's: it narrows by selectors and exclusions only
		return a.Resource, a.Kind, true, nil
	}
	for _, r := range m.m.ResourceRules {
		if named(r, a.Resource) {
			return a.Resource, a.Kind, true, nil
		}
	}
	if m.m.MatchPolicy != nil && *m.m.MatchPolicy == admissionregistrationv1.Exact {
		return none(nil)
	}
	for _, r := range m.m.ResourceRules {
		for _, eq := range c.Equivalents(a.Resource, a.Subresource) {
			if eq.Resource != a.Resource && named(r, eq.Resource) {
				return eq.Resource, eq.Kind, true, nil
			}
		}
	}
	return none(nil)
}
