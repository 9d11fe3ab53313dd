package apiserver

import (
	"net/http/httptest"
	"testing"
)

func TestParseRequestInfo(t *testing.T) {
	tests := []struct {
		name, method, url string
		want              RequestInfo
		ok                bool
	}{
		{"a pod in a namespace", "GET", "/api/v1/namespaces/default/pods/web",
			RequestInfo{Namespace: "default", Resource: "pods", Name: "web", Verb: "get"}, true},
		{"pods of all namespaces are listed", "GET", "/api/v1/pods",
			RequestInfo{Resource: "pods", Verb: "list"}, true},
		{"watch=1 is a watch", "GET", "/api/v1/namespaces/default/pods?watch=1",
			RequestInfo{Namespace: "default", Resource: "pods", Verb: "watch"}, true},
		{"a binding is a create on a subresource", "POST", "/api/v1/namespaces/default/pods/web/binding",
			RequestInfo{Namespace: "default", Resource: "pods", Name: "web", Subresource: "binding", Verb: "create"}, true},
		{"a namespace is itself a resource", "GET", "/api/v1/namespaces/kube-system",
			RequestInfo{Resource: "namespaces", Name: "kube-system", Verb: "get"}, true},
		{"a namespace's status is its subresource", "PUT", "/api/v1/namespaces/kube-system/status",
			RequestInfo{Resource: "namespaces", Name: "kube-system", Subresource: "status", Verb: "update"}, true},
		{"a group resource", "PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale",
			RequestInfo{Namespace: "default", Resource: "deployments", Name: "web", Subresource: "scale", Verb: "patch"}, true},
		{"DELETE on a collection is deletecollection", "DELETE", "/apis/apps/v1/namespaces/default/replicasets",
			RequestInfo{Namespace: "default", Resource: "replicasets", Verb: "deletecollection"}, true},
		{"a path that is too deep is not a resource", "GET", "/api/v1/namespaces/default/pods/web/status/extra", RequestInfo{}, false},
		{"the version endpoint is not a resource", "GET", "/version", RequestInfo{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRequestInfo(httptest.NewRequest(tc.method, tc.url, nil))
			if ok != tc.ok {
				t.Fatalf("ok = %v", ok)
			}
			if !ok {
				return
			}
			got.GroupVersion = tc.want.GroupVersion
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
