package webhook

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/admission/predicates"
)

// request is one admission request as the dispatcher sees it, with what
// matching reads once for all webhooks: the namespace.
type request struct {
	a       *admission.Attributes
	cluster Cluster
	user    authenticationv1.UserInfo
	ns      *predicates.NamespaceReader
}

// namespace is the request's namespace as a webhook is told it.
func (r *request) namespace() string { return predicates.Namespace(r.a) }

// invocation is a webhook that matched, and as what: the resource and
// kind of the rule that matched, which for an equivalent match
// (matchPolicy Equivalent) is another version than the request's.
type invocation struct {
	hook     *hook
	resource schema.GroupVersionResource
	kind     schema.GroupVersionKind
}

// shouldCall decides whether h is asked about r, as Kubernetes'
// ShouldCallHook does: the namespace and object selectors, the rules
// (exactly, then with equivalent versions), then the match conditions.
// An error refuses the request; nil, nil skips the webhook.
func shouldCall(ctx context.Context, h *hook, r *request) (*invocation, error) {
	if h.selectorErr != nil {
		return nil, apierrors.NewInternalError(h.selectorErr)
	}
	nsMatch, nsErr := r.ns.Matches(ctx, h.namespaceSelector)
	if !nsMatch && nsErr == nil {
		return nil, nil
	}
	if !predicates.ObjectMatches(h.objectSelector, r.a) {
		return nil, nil
	}
	inv := r.matchRules(h)
	if inv == nil {
		return nil, nil
	}
	if nsErr != nil {
		return nil, nsErr
	}
	if h.conditions != nil {
		ok, err := h.conditions.match(ctx, r, inv)
		if err != nil {
			return nil, apierrors.NewForbidden(r.a.Resource.GroupResource(), r.a.Name, err)
		}
		if !ok {
			return nil, nil
		}
	}
	return inv, nil
}

// matchRules finds the first rule that matches the request as it is,
// then, with matchPolicy Equivalent, the first that matches one of the
// resource's other versions (a rule for widgets v1 matches a write of
// widgets v2, and the webhook is sent a v1 object).
func (r *request) matchRules(h *hook) *invocation {
	for _, rule := range h.rules {
		if r.matches(rule, r.a.Resource) {
			return &invocation{hook: h, resource: r.a.Resource, kind: r.a.Kind}
		}
	}
	if !h.equivalent {
		return nil
	}
	for _, rule := range h.rules {
		for _, eq := range r.cluster.Equivalents(r.a.Resource, r.a.Subresource) {
			if eq.Resource != r.a.Resource && r.matches(rule, eq.Resource) {
				return &invocation{hook: h, resource: eq.Resource, kind: eq.Kind}
			}
		}
	}
	return nil
}

// matches: the rule matches the request as gvr (its resource, or an
// equivalent version of it).
func (r *request) matches(rule admissionregistrationv1.RuleWithOperations, gvr schema.GroupVersionResource) bool {
	return predicates.RuleMatches(rule, r.a, gvr)
}

// versioned is the request's object and old object as kind.
func (r *request) versioned(kind schema.GroupVersionKind) (obj, old runtime.Object, err error) {
	return predicates.Versioned(r.a, kind)
}
