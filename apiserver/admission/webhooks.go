package admission

import (
	"context"
)

// MutatingAdmissionWebhook and ValidatingAdmissionWebhook (Kubernetes'
// plugins of those names) hand every write, delete and connect to the
// admission webhooks the cluster's MutatingWebhookConfigurations and
// ValidatingWebhookConfigurations name: the mutating ones after the
// built-in mutating plugins, one at a time in name order, each seeing
// the object as the one before left it; the validating ones once the
// object is valid, all at once. The calling is package admission/webhook;
// these two only reach it, through the API server's Objects, which is
// also a Webhooks once the server was given a dispatcher (as it is also a
// StatusWriter). Without one (a unit test's Objects), they admit all.
var (
	MutatingAdmissionWebhook = Plugin{Name: "MutatingAdmissionWebhook", Handles: allOperations,
		Admit: func(ctx context.Context, a *Attributes, objs Objects) error { return callWebhooks(ctx, a, objs, false) }}
	ValidatingAdmissionWebhook = Plugin{Name: "ValidatingAdmissionWebhook", Handles: allOperations, Validating: true,
		Admit: func(ctx context.Context, a *Attributes, objs Objects) error { return callWebhooks(ctx, a, objs, true) }}
)

var allOperations = []Operation{Create, Update, Delete, Connect}

// Webhooks calls the cluster's admission webhooks about a: the
// validating ones if validating, else the mutating ones, which may
// change a.Object.
type Webhooks interface {
	CallWebhooks(ctx context.Context, a *Attributes, validating bool) error
}

func callWebhooks(ctx context.Context, a *Attributes, objs Objects, validating bool) error {
	w, ok := objs.(Webhooks)
	if !ok {
		return nil
	}
	return w.CallWebhooks(ctx, a, validating)
}

// MutatingAdmissionPolicy and ValidatingAdmissionPolicy apply the
// cluster's bound MutatingAdmissionPolicies (before the mutating
// webhooks) and evaluate its ValidatingAdmissionPolicies (once the object
// is valid, before the validating webhooks), as kube-apiserver orders
// them; package admission/policy. They reach it as the webhook plugins
// reach theirs.
var (
	MutatingAdmissionPolicy = Plugin{Name: "MutatingAdmissionPolicy", Handles: []Operation{Create, Update, Connect},
		Admit: func(ctx context.Context, a *Attributes, objs Objects) error {
			return evaluatePolicies(ctx, a, objs, false)
		}}
	ValidatingAdmissionPolicy = Plugin{Name: "ValidatingAdmissionPolicy", Handles: allOperations, Validating: true,
		Admit: func(ctx context.Context, a *Attributes, objs Objects) error {
			return evaluatePolicies(ctx, a, objs, true)
		}}
)

// Policies applies the cluster's admission policies to a: the
// validating ones if validating, else the mutating ones, which may change
// a.Object.
type Policies interface {
	EvaluatePolicies(ctx context.Context, a *Attributes, validating bool) error
}

func evaluatePolicies(ctx context.Context, a *Attributes, objs Objects, validating bool) error {
	p, ok := objs.(Policies)
	if !ok {
		return nil
	}
	return p.EvaluatePolicies(ctx, a, validating)
}

// A webhook's answer may carry warnings for the client, which the API
// server sends as "Warning: 299 - ..." headers (kubectl prints them as
// "Warning: ..."). The request's context carries where they go.

type warningsKey struct{}

// WithWarnings returns ctx with add as the place warnings go.
func WithWarnings(ctx context.Context, add func(text string)) context.Context {
	return context.WithValue(ctx, warningsKey{}, add)
}

// Warn adds a warning to the request ctx belongs to; it is dropped if the
// request has no place for warnings.
func Warn(ctx context.Context, text string) {
	if add, ok := ctx.Value(warningsKey{}).(func(string)); ok {
		add(text)
	}
}
