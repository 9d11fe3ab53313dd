package rbac

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/mkube/mkube/apiserver/authorization"
)

func resourceRequest(verb, group, resource, subresource, name string) authorization.Attributes {
	return authorization.Attributes{Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: subresource,
		Namespace: "default", Name: name}
}

func pathRequest(verb, path string) authorization.Attributes {
	return authorization.Attributes{Verb: verb, Path: path}
}

func TestRuleAllows(t *testing.T) {
	podsAndLogs := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/log"}}
	oneConfigMap := rbacv1.PolicyRule{Verbs: []string{"get", "update"}, APIGroups: []string{""}, Resources: []string{"configmaps"},
		ResourceNames: []string{"my-configmap"}}
	anyScale := rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}
	healthz := rbacv1.PolicyRule{Verbs: []string{"get", "post"}, NonResourceURLs: []string{"/healthz", "/healthz/*"}}
	everything := rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}

	tests := []struct {
		name  string
		rule  rbacv1.PolicyRule
		a     authorization.Attributes
		allow bool
	}{
		{"a rule for pods lets one list pods", podsAndLogs, resourceRequest("list", "", "pods", "", ""), true},
		{"a rule for pods lets one get a pod", podsAndLogs, resourceRequest("get", "", "pods", "", "web"), true},
		{"but not delete it: the verb is not in the rule", podsAndLogs, resourceRequest("delete", "", "pods", "", "web"), false},
		{"pods/log in the rule is a pod's log", podsAndLogs, resourceRequest("get", "", "pods", "log", "web"), true},
		{"pods in the rule is not a pod's exec subresource", podsAndLogs, resourceRequest("get", "", "pods", "exec", "web"), false},
		{"the core group is not apps", podsAndLogs, resourceRequest("list", "apps", "pods", "", ""), false},
		{"a resource name limits a get to that object", oneConfigMap, resourceRequest("get", "", "configmaps", "", "my-configmap"), true},
		{"and refuses another one", oneConfigMap, resourceRequest("get", "", "configmaps", "", "other"), false},
		{"and a list, which names no object", oneConfigMap, resourceRequest("list", "", "configmaps", "", ""), false},
		{"*/scale is the scale of a deployment", anyScale, resourceRequest("update", "apps", "deployments", "scale", "web"), true},
		{"*/scale is not the deployment itself", anyScale, resourceRequest("update", "apps", "deployments", "", "web"), false},
		{"*/scale is not another subresource ending in scale", anyScale, resourceRequest("update", "apps", "deployments", "rescale", "web"), false},
		{"* is every verb, group and resource", everything, resourceRequest("deletecollection", "storage.k8s.io", "storageclasses", "", ""), true},
		{"* on resources covers subresources too", everything, resourceRequest("create", "", "pods", "eviction", "web"), true},
		{"a resource rule does not grant a path", everything, pathRequest("get", "/healthz"), false},
		{"a non-resource URL grants its path", healthz, pathRequest("get", "/healthz"), true},
		{"a trailing * grants the paths below", healthz, pathRequest("post", "/healthz/etcd"), true},
		{"but not a path that only starts alike", healthz, pathRequest("get", "/healthzz"), false},
		{"nor another verb", healthz, pathRequest("delete", "/healthz"), false},
		{"a path rule does not grant a resource", healthz, resourceRequest("get", "", "healthz", "", ""), false},
		{"a lone * grants every path", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, pathRequest("get", "/openapi/v3"), true},
		{"a rule without verbs grants nothing", rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}}, resourceRequest("get", "", "pods", "", ""), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleAllows(&tc.a, &tc.rule); got != tc.allow {
				t.Errorf("RuleAllows(%+v, %+v) = %v, want %v", tc.a, tc.rule, got, tc.allow)
			}
		})
	}
}

// referenceAllows is Kubernetes' rule check written the plain way, with
// "resource/subresource" built as a string: what RuleAllows must agree with.
func referenceAllows(a *authorization.Attributes, r *rbacv1.PolicyRule) bool {
	in := func(set []string, s string) bool {
		for _, v := range set {
			if v == s {
				return true
			}
		}
		return false
	}
	if !in(r.Verbs, a.Verb) && !in(r.Verbs, "*") {
		return false
	}
	if !a.ResourceRequest {
		for _, u := range r.NonResourceURLs {
			if u == "*" || u == a.Path || (strings.HasSuffix(u, "*") && strings.HasPrefix(a.Path, strings.TrimRight(u, "*"))) {
				return true
			}
		}
		return false
	}
	if !in(r.APIGroups, a.APIGroup) && !in(r.APIGroups, "*") {
		return false
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	resourceOK := false
	for _, res := range r.Resources {
		if res == "*" || res == combined || (a.Subresource != "" && res == "*/"+a.Subresource) {
			resourceOK = true
		}
	}
	return resourceOK && (len(r.ResourceNames) == 0 || in(r.ResourceNames, a.Name))
}

// FuzzRuleAllows checks the allocation-free matcher against the plain one
// on any rule and request, the tricky cases being resources and
// subresources that share prefixes and suffixes ("pods/log" and
// "pods/logs", "*/scale" and "rescale").
func FuzzRuleAllows(f *testing.F) {
	f.Add("get", "", "pods", "log", "web", "/healthz", "get,list", ",apps", "pods,pods/log,*/scale", "", "/healthz,/api/*", true)
	f.Add("update", "apps", "deployments", "scale", "", "", "*", "*", "*/scale", "web", "", true)
	f.Add("get", "", "pods", "", "", "/healthz/etcd", "get", "", "pods/", "", "/healthz*", false)
	f.Add("get", "", "pod", "s/log", "", "", "get", "", "pods/log", "", "", true)
	f.Fuzz(func(t *testing.T, verb, group, resource, subresource, name, path, verbs, groups, resources, names, urls string, isResource bool) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		a := authorization.Attributes{Verb: verb, ResourceRequest: isResource, APIGroup: group, Resource: resource,
			Subresource: subresource, Name: name, Path: path}
		r := rbacv1.PolicyRule{Verbs: split(verbs), APIGroups: split(groups), Resources: split(resources),
			ResourceNames: split(names), NonResourceURLs: split(urls)}
		if got, want := RuleAllows(&a, &r), referenceAllows(&a, &r); got != want {
			t.Errorf("RuleAllows(%+v, %+v) = %v, Kubernetes' check says %v", a, r, got, want)
		}
	})
}
