// Package authorization decides whether a user may do what a request asks,
// as kube-apiserver's authorizers do, between authentication (who sent
// it) and the handlers (seed 003 §十二):
//
//   - the request becomes Attributes: the user, a verb, and either a
//     resource (API group, resource, subresource, namespace, name) or a
//     non-resource path (/healthz, /api, /openapi/v3);
//   - an Authorizer answers Allow, Deny or NoOpinion, with a reason;
//   - a Union asks its members in order, and the first that allows or
//     denies decides. kube-apiserver's chain, and mkube's, starts with
//     PrivilegedGroups (system:masters may do anything), then each
//     --authorization-mode: Node (package node: what kubelets may do),
//     RBAC (package rbac) or AlwaysAllow;
//   - anything not allowed is 403 Forbidden, worded by Forbidden.
//
// The access reviews (kubectl auth can-i) ask the same chain, which the
// server puts in each request's context (From).
//
// Where things live:
//
//	file              what it holds
//	authorizer.go     Decision, Authorizer, RuleResolver, Union, PrivilegedGroups, and the chain in a request's context (WithRequest, From)
//	attributes.go     Attributes, and Forbidden: the 403 message in Kubernetes' words
//	modes.go          --authorization-mode: ParseModes, and Chain, the union built from the modes after system:masters
//	impersonation.go  Impersonate: the Impersonate-User and Impersonate-Group headers, each checked with the chain
package authorization

import (
	"context"
	"errors"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// Decision is an authorizer's answer.
type Decision int

const (
	// NoOpinion: this authorizer neither allows nor denies; the next one
	// is asked, and if none allows, the request is forbidden.
	NoOpinion Decision = iota
	Allow
	// Deny stops the chain at once. RBAC never denies (its rules only
	// grant), so in mkube nothing does yet.
	Deny
)

// Authorizer decides on one request. reason says why, for the logs, the
// reviews and the 403 message; err is a failure to evaluate (a role a
// binding names is missing), which does not by itself forbid.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (d Decision, reason string, err error)
}

// RuleResolver lists the rules that apply to a user in a namespace (""
// for the cluster scope): what SelfSubjectRulesReview (`kubectl auth
// can-i --list`) shows and what RBAC's escalation check compares a new
// role against. incomplete says the list may lack rules some authorizer
// cannot express as rules.
type RuleResolver interface {
	RulesFor(user authenticationv1.UserInfo, namespace string) (rules []rbacv1.PolicyRule, incomplete bool, err error)
}

// Union asks each authorizer in turn: the first Allow or Deny decides.
// If none does, the answer is NoOpinion with every reason given.
type Union []Authorizer

func (u Union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var reasons []string
	var errs []error
	for _, authz := range u {
		d, reason, err := authz.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if d != NoOpinion {
			return d, reason, err
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
	}
	return NoOpinion, strings.Join(reasons, "\n"), errors.Join(errs...)
}

// RulesFor joins the rules of every member that can list them; the list
// is incomplete if one of them cannot (PrivilegedGroups: its power is not
// a rule, though cluster-admin bound to system:masters says the same).
func (u Union) RulesFor(user authenticationv1.UserInfo, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	var rules []rbacv1.PolicyRule
	incomplete := false
	var errs []error
	for _, authz := range u {
		r, ok := authz.(RuleResolver)
		if !ok {
			continue
		}
		more, inc, err := r.RulesFor(user, namespace)
		rules = append(rules, more...)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rules, incomplete, errors.Join(errs...)
}

// PrivilegedGroups allows everything to the members of these groups:
// kube-apiserver puts system:masters first in its chain, so that no role,
// however broken, can lock the cluster's administrators out.
type PrivilegedGroups []string

func (p PrivilegedGroups) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	for _, g := range a.User.Groups {
		if slices.Contains(p, g) {
			return Allow, "", nil
		}
	}
	return NoOpinion, "", nil
}

// AlwaysAllow is --authorization-mode=AlwaysAllow: every request may.
type AlwaysAllow struct{}

func (AlwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return Allow, "", nil
}

// RulesFor is everything, on every resource and path.
func (AlwaysAllow) RulesFor(authenticationv1.UserInfo, string) ([]rbacv1.PolicyRule, bool, error) {
	return []rbacv1.PolicyRule{
		{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
		{Verbs: []string{rbacv1.VerbAll}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
	}, false, nil
}

type requestKey struct{}

// decided is what the server records in a request's context once it has
// authorized it: its authorizer and what the request asked.
type decided struct {
	authorizer Authorizer
	attrs      Attributes
}

// WithRequest records in a request's context the server's authorizer and
// the request's attributes, for the handlers that ask it again (the
// access reviews, RBAC's escalation check) or need the path's namespace.
func WithRequest(ctx context.Context, authz Authorizer, a Attributes) context.Context {
	return context.WithValue(ctx, requestKey{}, &decided{authorizer: authz, attrs: a})
}

// From is the authorizer of the server that took the request; AlwaysAllow
// if it has none (a server without authorization, as in component tests).
func From(ctx context.Context) Authorizer {
	if d, ok := ctx.Value(requestKey{}).(*decided); ok {
		return d.authorizer
	}
	return AlwaysAllow{}
}

// AttributesFrom is what the request asked, as the server read it.
func AttributesFrom(ctx context.Context) (Attributes, bool) {
	d, ok := ctx.Value(requestKey{}).(*decided)
	if !ok {
		return Attributes{}, false
	}
	return d.attrs, true
}
