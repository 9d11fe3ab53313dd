package rbac

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization"
)

// RBAC's escalation check: a user may create or change a role, or bind
// one, only if it already holds every permission that grants, so that
// the right to write roles is not the right to do everything. Two verbs
// lift it: escalate on roles/clusterroles (write any role) and bind on a
// role (grant that role). system:masters is never checked.

// RoleRefResolver is an authorizer that can say what a roleRef grants
// (the RBAC authorizer).
type RoleRefResolver interface {
	RoleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error)
}

// confirmNoRoleEscalation lets the request's user write a role (resource
// roles or clusterroles) with these rules.
func confirmNoRoleEscalation(ctx context.Context, resource, namespace, name string, rules []rbacv1.PolicyRule) error {
	user, ok := authentication.UserFrom(ctx)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("no user on context"))
	}
	if slices.Contains(user.Groups, authorization.Masters) || allowed(ctx, escalate(user, resource, namespace, name)) {
		return nil
	}
	return confirmHeld(ctx, resource, namespace, name, rules)
}

// fullAuthority is cluster-admin's rules: what setting or changing an
// aggregationRule needs, since it may gather any rule.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
	{Verbs: []string{rbacv1.VerbAll}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
}

// confirmNoClusterRoleEscalation is confirmNoRoleEscalation for a
// ClusterRole, which if it aggregates (or did) needs cluster-admin's rights.
func confirmNoClusterRoleEscalation(ctx context.Context, name string, rules []rbacv1.PolicyRule, aggregates bool) error {
	if err := confirmNoRoleEscalation(ctx, "clusterroles", "", name, rules); err != nil || !aggregates {
		return err
	}
	user, _ := authentication.UserFrom(ctx)
	if slices.Contains(user.Groups, authorization.Masters) || allowed(ctx, escalate(user, "clusterroles", "", name)) {
		return nil
	}
	if confirmHeld(ctx, "clusterroles", "", name, fullAuthority) != nil {
		return apierrors.NewForbidden(schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterroles"}, name,
			plainError("must have cluster-admin privileges to use the aggregationRule"))
	}
	return nil
}

// escalate is the check that lifts the escalation check on roles.
func escalate(user authenticationv1.UserInfo, resource, namespace, name string) authorization.Attributes {
	return authorization.Attributes{User: user, Verb: "escalate", ResourceRequest: true,
		APIGroup: rbacv1.GroupName, APIVersion: "*", Resource: resource, Namespace: namespace, Name: name}
}

// confirmNoBindingEscalation lets the request's user write a binding (in
// namespace, "" for a ClusterRoleBinding) of the role ref names.
func confirmNoBindingEscalation(ctx context.Context, resource, namespace, name string, ref rbacv1.RoleRef) error {
	user, ok := authentication.UserFrom(ctx)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("no user on context"))
	}
	if slices.Contains(user.Groups, authorization.Masters) {
		return nil
	}
	bind := authorization.Attributes{User: user, Verb: "bind", ResourceRequest: true,
		APIGroup: ref.APIGroup, APIVersion: "*", Namespace: namespace, Name: ref.Name}
	switch ref.Kind {
	case "ClusterRole":
		bind.Resource = "clusterroles"
	case "Role":
		bind.Resource = "roles"
	}
	if bind.Resource != "" && allowed(ctx, bind) {
		return nil
	}
	gr := schema.GroupResource{Group: rbacv1.GroupName, Resource: resource}
	resolver, ok := rbacAuthorizer(ctx)
	if !ok {
		return apierrors.NewForbidden(gr, name, fmt.Errorf("no RBAC authorizer to resolve %s %q", ref.Kind, ref.Name))
	}
	rules, err := resolver.RoleRefRules(ref, namespace)
	if err != nil {
		return apierrors.NewForbidden(gr, name, err)
	}
	return confirmHeld(ctx, resource, namespace, name, rules)
}

// confirmHeld is Kubernetes' ConfirmNoEscalation: the user's own rules in
// the namespace must cover rules, else 403 listing what it lacks:
//
//	user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//	{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}
func confirmHeld(ctx context.Context, resource, namespace, name string, rules []rbacv1.PolicyRule) error {
	user, _ := authentication.UserFrom(ctx)
	gr := schema.GroupResource{Group: rbacv1.GroupName, Resource: resource}
	resolver, ok := authorization.From(ctx).(authorization.RuleResolver)
	if !ok {
		return apierrors.NewForbidden(gr, name, fmt.Errorf("no authorizer lists the rules of user %q", user.Username))
	}
	owned, _, err := resolver.RulesFor(user, namespace)
	covered, missing := validation.Covers(owned, rules)
	if covered {
		return nil
	}
	var lines []string
	for _, r := range compactRules(missing) {
		lines = append(lines, compactString(r))
	}
	slices.Sort(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s",
		user.Username, user.Groups, strings.Join(slices.Compact(lines), "\n"))
	if err != nil {
		msg += fmt.Sprintf("; resolution errors: %v", err)
	}
	return apierrors.NewForbidden(gr, name, plainError(msg))
}

// allowed asks the server's authorizer about a check of its own.
func allowed(ctx context.Context, a authorization.Attributes) bool {
	d, _, _ := authorization.From(ctx).Authorize(ctx, a)
	return d == authorization.Allow
}

// rbacAuthorizer finds the member of the server's chain that resolves
// role references.
func rbacAuthorizer(ctx context.Context) (RoleRefResolver, bool) {
	switch a := authorization.From(ctx).(type) {
	case RoleRefResolver:
		return a, true
	case authorization.Union:
		for _, m := range a {
			if r, ok := m.(RoleRefResolver); ok {
				return r, true
			}
		}
	}
	return nil, false
}

// compactRules merges the one-verb rules Covers reports for the same
// group, resource and name, as Kubernetes' CompactRules does.
func compactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type simple struct{ group, resource, name string }
	var out []rbacv1.PolicyRule
	merged := map[simple]int{} // index in out
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 || len(r.ResourceNames) > 1 {
			out = append(out, r)
			continue
		}
		k := simple{r.APIGroups[0], r.Resources[0], strings.Join(r.ResourceNames, "")}
		if i, ok := merged[k]; ok {
			out[i].Verbs = append(out[i].Verbs, r.Verbs...)
			continue
		}
		merged[k] = len(out)
		out = append(out, *r.DeepCopy())
	}
	return out
}

// compactString is Kubernetes' CompactString of a rule:
// {APIGroups:[""], Resources:["pods"], Verbs:["delete"]}.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(name string, v []string) {
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, v))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}

// plainError is a message as an error, without fmt's verbs being read in it.
type plainError string

func (e plainError) Error() string { return string(e) }
