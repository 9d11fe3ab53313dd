package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/mkube/mkube/apiserver/authorization"
)

// RuleAllows reports whether one PolicyRule grants the request (seed 003
// §十二.3, "对资源的引用方式"). A resource request needs all four of:
//
//   - the verb among the rule's verbs, or "*";
//   - the API group among its apiGroups ("" is the core group), or "*";
//   - the resource among its resources: "pods" for /pods, "pods/log" for
//     a pod's log (a subresource is RESOURCE/SUBRESOURCE), "*/scale" for
//     the scale of any resource, "*" for everything;
//   - no resourceNames, or the object's name among them. A list or a
//     create has no name, so a rule with names never grants them.
//
// A request for a path (/healthz) needs the verb and the path among the
// rule's nonResourceURLs, where a trailing "*" matches any rest:
// "/healthz/*" grants /healthz/etcd, "*" every path.
//
// For example {verbs: [get, list], apiGroups: [""], resources: [pods,
// pods/log]} allows GET .../pods and .../pods/web/log, not DELETE
// .../pods/web nor GET .../pods/web/exec.
func RuleAllows(a *authorization.Attributes, rule *rbacv1.PolicyRule) bool {
	if !hasOrAll(rule.Verbs, a.Verb, rbacv1.VerbAll) {
		return false
	}
	if !a.ResourceRequest {
		return nonResourceURLMatches(rule.NonResourceURLs, a.Path)
	}
	return hasOrAll(rule.APIGroups, a.APIGroup, rbacv1.APIGroupAll) &&
		resourceMatches(rule.Resources, a.Resource, a.Subresource) &&
		(len(rule.ResourceNames) == 0 || has(rule.ResourceNames, a.Name))
}

// resourceMatches compares without building "resource/subresource", so
// that a request's check allocates nothing.
func resourceMatches(ruleResources []string, resource, subresource string) bool {
	for _, r := range ruleResources {
		switch {
		case r == rbacv1.ResourceAll:
			return true
		case subresource == "":
			if r == resource {
				return true
			}
		case len(r) == len(resource)+1+len(subresource) && strings.HasPrefix(r, resource) &&
			r[len(resource)] == '/' && strings.HasSuffix(r, subresource):
			return true // "pods/log"
		case len(r) == 2+len(subresource) && strings.HasPrefix(r, "*/") && strings.HasSuffix(r, subresource):
			return true // "*/scale"
		}
	}
	return false
}

func nonResourceURLMatches(ruleURLs []string, path string) bool {
	for _, u := range ruleURLs {
		switch {
		case u == rbacv1.NonResourceAll || u == path:
			return true
		case strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")):
			return true
		}
	}
	return false
}

func hasOrAll(set []string, s, all string) bool {
	for _, v := range set {
		if v == s || v == all {
			return true
		}
	}
	return false
}

func has(set []string, s string) bool {
	for _, v := range set {
		if v == s {
			return true
		}
	}
	return false
}
