// Package predicates decides whether a request is one an admission
// webhook or policy asked about, as Kubernetes' webhook/predicates: its
// rules (operations, API groups, versions, resources with subresources,
// scope) and its object selector. Both the webhook dispatcher
// (admission/webhook) and the policy evaluator (admission/policy) match
// with it, as they do in Kubernetes.
//
// Where things live:
//
//	file           what it holds
//	predicates.go  RuleMatches (operations, groups, versions, resources, scope), ObjectMatches, the request's Namespace
//	namespace.go   NamespaceReader: the request's namespace, read once, for a namespaceSelector
//	versioned.go   Versioned and CELAttributes: a request seen at the version a webhook or policy asked for
package predicates

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/apiserver/admission"
)

// Namespaces is the resource of namespaces, which are cluster-scoped and
// yet have a namespace (their own name) as far as selectors go.
var Namespaces = corev1.SchemeGroupVersion.WithResource("namespaces")

// RuleMatches is Kubernetes' rules.Matcher: the request's scope,
// operation, and gvr (the request's resource, or an equivalent version
// of it) match the rule. A resource entry may name a subresource
// ("pods/status"), "*" on either side of the slash, or "*" alone (every
// resource, no subresource).
func RuleMatches(rule admissionregistrationv1.RuleWithOperations, a *admission.Attributes, gvr schema.GroupVersionResource) bool {
	return scopeMatches(rule.Scope, a) && operationMatches(rule.Operations, a.Operation) &&
		exactOrWildcard(rule.APIGroups, gvr.Group) && exactOrWildcard(rule.APIVersions, gvr.Version) &&
		resourceMatches(rule.Resources, gvr.Resource, a.Subresource)
}

func exactOrWildcard(items []string, want string) bool {
	for _, it := range items {
		if it == "*" || it == want {
			return true
		}
	}
	return false
}

func operationMatches(ops []admissionregistrationv1.OperationType, op admission.Operation) bool {
	for _, o := range ops {
		if o == admissionregistrationv1.OperationAll || string(o) == string(op) {
			return true
		}
	}
	return false
}

func resourceMatches(entries []string, resource, subresource string) bool {
	for _, e := range entries {
		res, sub, _ := strings.Cut(e, "/")
		if (res == "*" || res == resource) && (sub == "*" || sub == subresource) {
			return true
		}
	}
	return false
}

// scopeMatches: "Namespaced" matches namespaced objects, "Cluster" the
// cluster-scoped ones, which include namespaces themselves.
func scopeMatches(scope *admissionregistrationv1.ScopeType, a *admission.Attributes) bool {
	if scope == nil || *scope == admissionregistrationv1.AllScopes {
		return true
	}
	namespaced := a.Resource != Namespaces && a.Namespace != ""
	switch *scope {
	case admissionregistrationv1.NamespacedScope:
		return namespaced
	case admissionregistrationv1.ClusterScope:
		return !namespaced
	}
	return false
}

// ObjectMatches matches an objectSelector against the labels of the
// object or of the old one (a delete has only the old one; a connect's
// options have none, so only an empty selector matches them).
func ObjectMatches(sel labels.Selector, a *admission.Attributes) bool {
	if sel.Empty() {
		return true
	}
	for _, obj := range []runtime.Object{a.Object, a.OldObject} {
		if obj == nil {
			continue
		}
		if m, err := meta.Accessor(obj); err == nil && sel.Matches(labels.Set(m.GetLabels())) {
			return true
		}
	}
	return false
}

// Namespace is the request's namespace as webhooks and policies are told
// it: a namespace's own name for a request about a namespace, as
// Kubernetes' request info gives it.
func Namespace(a *admission.Attributes) string {
	if a.Resource == Namespaces {
		return a.Name
	}
	return a.Namespace
}

// NewLabels is the labels a namespace selector judges a request about a
// namespace by, if it writes one (its new labels), and whether it does;
// otherwise the stored namespace's labels are what count.
func NewLabels(a *admission.Attributes) (labels.Set, bool) {
	if a.Resource != Namespaces || a.Subresource != "" || (a.Operation != admission.Create && a.Operation != admission.Update) {
		return nil, false
	}
	m, err := meta.Accessor(a.Object)
	if err != nil {
		return nil, false
	}
	return labels.Set(m.GetLabels()), true
}

// Cluster is the API server as webhooks and policies read it: its
// objects (the namespaces namespace selectors judge; Services,
// EndpointSlices and Nodes to reach a webhook), and the versions each
// resource is served at.
type Cluster interface {
	admission.Objects
	// Equivalents are the resource (with subresource) at every version
	// it is served at, with the kind each version's object is, for
	// matchPolicy Equivalent.
	Equivalents(gvr schema.GroupVersionResource, subresource string) []Equivalent
}

// Equivalent is one version of a resource.
type Equivalent struct {
	Resource schema.GroupVersionResource
	Kind     schema.GroupVersionKind
}
