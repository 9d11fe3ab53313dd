package quota

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Write is what an evaluator is told about a write: a create (Old nil)
// or an update, of the object itself or of a subresource ("status").
type Write struct {
	Subresource string
	Object, Old runtime.Object
}

// Evaluator knows what objects of one resource cost (Kubernetes'
// quota.Evaluator).
type Evaluator interface {
	GroupResource() schema.GroupResource
	// Handles reports whether the write can change the resource's usage,
	// so that admission must look at the quotas at all.
	Handles(w Write) bool
	// Matching returns those of a quota's names the resource counts
	// towards; a quota with none of them does not concern it.
	Matching(names []corev1.ResourceName) []corev1.ResourceName
	// MatchesScope reports whether obj falls in a quota's scope; a
	// resource without scopes falls in none.
	MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error)
	// Constraints checks that obj states what a quota limiting required
	// needs to count it (a pod's cpu requests, for a cpu quota).
	Constraints(required []corev1.ResourceName, obj runtime.Object) error
	// Usage is what obj costs at time now (a pod past its deletion grace
	// period costs nothing but its object count).
	Usage(obj runtime.Object, now time.Time) (corev1.ResourceList, error)
}

// legacyCountNames are the count names older than count/<resource>, kept
// as aliases: a quota of "configmaps: 10" counts ConfigMaps.
var legacyCountNames = map[schema.GroupResource]corev1.ResourceName{
	{Resource: "configmaps"}:             corev1.ResourceConfigMaps,
	{Resource: "resourcequotas"}:         corev1.ResourceQuotas,
	{Resource: "replicationcontrollers"}: corev1.ResourceReplicationControllers,
	{Resource: "secrets"}:                corev1.ResourceSecrets,
}

// For returns the evaluator of a resource: pods, services and claims
// cost more than their number; every other resource is counted by
// count/<resource>.<group> (and its legacy alias, if it has one), as
// Kubernetes' admission creates an object count evaluator for any
// resource it meets.
func For(gr schema.GroupResource) Evaluator {
	switch gr {
	case schema.GroupResource{Resource: "pods"}:
		return Pods
	case schema.GroupResource{Resource: "services"}:
		return Services
	case schema.GroupResource{Resource: "persistentvolumeclaims"}:
		return Claims
	}
	return NewObjectCount(gr, legacyCountNames[gr])
}

// Ignored are the resources quota never counts: the virtual ones, which
// are never stored, and events, which have never been quota-ed
// (Kubernetes' DefaultIgnoredResources).
var Ignored = sets.New(
	schema.GroupResource{Resource: "bindings"},
	schema.GroupResource{Resource: "componentstatuses"},
	schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"},
	schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
	schema.GroupResource{Resource: "events"},
	schema.GroupResource{Group: "events.k8s.io", Resource: "events"},
)

// ScopeSelectors are a quota's scopes as selector requirements:
// spec.scopes (each "Exists") then spec.scopeSelector's expressions.
func ScopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, scope := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: scope, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// Matches reports whether quota q concerns obj: it limits at least one
// name obj's resource counts towards, and obj falls in every one of its
// scopes (a quota without scopes takes everything). Kubernetes matches
// on status.hard, what the controller has acknowledged.
func Matches(e Evaluator, q *corev1.ResourceQuota, obj runtime.Object) (bool, error) {
	if len(e.Matching(Names(q.Status.Hard))) == 0 {
		return false, nil
	}
	for _, sel := range ScopeSelectors(q) {
		ok, err := e.MatchesScope(sel, obj)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// selectorMatches evaluates a scope selector with In/NotIn values, such
// as PriorityClass In (high, low), against the scope's value on an
// object ("" when it has none), as a label selector on the one label
// scopeName=value.
func selectorMatches(sel corev1.ScopedResourceSelectorRequirement, value string) (bool, error) {
	ops := map[corev1.ScopeSelectorOperator]selection.Operator{
		corev1.ScopeSelectorOpIn: selection.In, corev1.ScopeSelectorOpNotIn: selection.NotIn,
		corev1.ScopeSelectorOpExists: selection.Exists, corev1.ScopeSelectorOpDoesNotExist: selection.DoesNotExist,
	}
	op, ok := ops[sel.Operator]
	if !ok {
		return false, fmt.Errorf("%q is not a valid scope selector operator", sel.Operator)
	}
	req, err := labels.NewRequirement(string(sel.ScopeName), op, sel.Values)
	if err != nil {
		return false, fmt.Errorf("failed to parse and convert selector: %w", err)
	}
	set := labels.Set{}
	if value != "" {
		set[string(sel.ScopeName)] = value
	}
	return labels.NewSelector().Add(*req).Matches(set), nil
}
