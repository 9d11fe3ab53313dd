package rbac

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/mkube/mkube/apiserver/authorization"
)

// Authorize allows the request if a rule of a role bound to its user
// allows it, saying which binding did:
//
//	RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to User "jane"
//
// Otherwise it has no opinion; the reason then lists the roles that
// bindings of the user name but that do not exist.
func (p *Policy) Authorize(_ context.Context, a authorization.Attributes) (authorization.Decision, string, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var reason string
	var errs []error
	p.visit(a.User, a.Namespace, func(b binding, rules []rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = appendNew(errs, err)
			return true
		}
		for i := range rules {
			if RuleAllows(&a, &rules[i]) {
				reason = "RBAC: allowed by " + b.describe(a.User)
				return false
			}
		}
		return true
	})
	if reason != "" {
		return authorization.Allow, reason, nil
	}
	if len(errs) > 0 {
		return authorization.NoOpinion, fmt.Sprintf("RBAC: %v", utilerrors.NewAggregate(errs)), nil
	}
	return authorization.NoOpinion, "", nil
}

// RulesFor lists the rules of every role bound to user, in the namespace
// (its RoleBindings) and cluster-wide (every ClusterRoleBinding).
func (p *Policy) RulesFor(user authenticationv1.UserInfo, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var rules []rbacv1.PolicyRule
	var errs []error
	seen := map[any]bool{} // a binding naming both the user and a group is visited twice
	p.visit(user, namespace, func(b binding, more []rbacv1.PolicyRule, err error) bool {
		switch {
		case err != nil:
			errs = appendNew(errs, err)
		case !seen[b.object()]:
			seen[b.object()] = true
			rules = append(rules, more...)
		}
		return true
	})
	return rules, false, utilerrors.NewAggregate(errs)
}

// RoleRefRules are the rules of the role a binding in namespace ("" for a
// ClusterRoleBinding) refers to: what RBAC's escalation check compares
// with the rules of the user creating the binding.
func (p *Policy) RoleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.roleRules(ref, namespace)
}

// visit calls fn with each binding of user and its role's rules (or why
// they cannot be had): the ClusterRoleBindings first, then the
// RoleBindings of namespace. fn returns false to stop. Callers hold mu.
func (p *Policy) visit(user authenticationv1.UserInfo, namespace string, fn func(b binding, rules []rbacv1.PolicyRule, err error) bool) {
	keys := func(yield func(subjectKey) bool) {
		if !yield(subjectKey{name: user.Username}) {
			return
		}
		for _, g := range user.Groups {
			if !yield(subjectKey{group: true, name: g}) {
				return
			}
		}
	}
	for k := range keys {
		for _, b := range p.clusterBySubject[k] {
			rules, err := p.roleRules(b.RoleRef, "")
			if !fn(binding{cluster: b}, rules, err) {
				return
			}
		}
	}
	if namespace == "" {
		return
	}
	for k := range keys {
		for _, b := range p.roleBySubject[namespacedKey{namespace, k}] {
			rules, err := p.roleRules(b.RoleRef, namespace)
			if !fn(binding{namespaced: b}, rules, err) {
				return
			}
		}
	}
}

// roleRules finds a role by reference. Callers hold mu.
func (p *Policy) roleRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		if r, ok := p.roles[types.NamespacedName{Namespace: namespace, Name: ref.Name}]; ok {
			return r.Rules, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: rbacv1.GroupName, Resource: "role"}, ref.Name)
	case "ClusterRole":
		if r, ok := p.clusterRoles[ref.Name]; ok {
			return r.Rules, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterrole"}, ref.Name)
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// appendNew adds err unless an error with its message is already there.
func appendNew(errs []error, err error) []error {
	for _, e := range errs {
		if e.Error() == err.Error() {
			return errs
		}
	}
	return append(errs, err)
}
