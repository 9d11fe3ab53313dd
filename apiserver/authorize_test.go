package apiserver_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/internal/testserver"
)

// refuser forbids every request, remembering what it was asked.
type refuser struct {
	mu   sync.Mutex
	last authorization.Attributes
}

func (r *refuser) Authorize(_ context.Context, a authorization.Attributes) (authorization.Decision, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = a
	return authorization.NoOpinion, "", nil
}

// Every request is authorized before it is served, with the attributes
// kube-apiserver reads off it, and refused in its words.
func TestRequestsAreAuthorizedWithKubernetesAttributes(t *testing.T) {
	authz := &refuser{}
	s := testserver.StartServer(t, func(c *apiserver.Config) { c.Authorizer = authz })
	tests := []struct {
		name, method, path string
		want               authorization.Attributes
		message            string
	}{
		{"a list in a namespace", http.MethodGet, "/api/v1/namespaces/default/pods",
			authorization.Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "default"},
			`pods is forbidden: User "system:unsecured" cannot list resource "pods" in API group "" in the namespace "default"`},
		{"a watch of every namespace", http.MethodGet, "/apis/apps/v1/deployments?watch=true",
			authorization.Attributes{Verb: "watch", ResourceRequest: true, APIGroup: "apps", APIVersion: "v1", Resource: "deployments"},
			`deployments.apps is forbidden: User "system:unsecured" cannot watch resource "deployments" in API group "apps" at the cluster scope`},
		{"a subresource", http.MethodPost, "/api/v1/namespaces/default/pods/web/eviction",
			authorization.Attributes{Verb: "create", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Subresource: "eviction", Namespace: "default", Name: "web"},
			`pods "web" is forbidden: User "system:unsecured" cannot create resource "pods/eviction" in API group "" in the namespace "default"`},
		{"a namespace is in itself", http.MethodGet, "/api/v1/namespaces/local",
			authorization.Attributes{Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "namespaces", Namespace: "local", Name: "local"},
			`namespaces "local" is forbidden: User "system:unsecured" cannot get resource "namespaces" in API group "" in the namespace "local"`},
		{"a list by name is about that name", http.MethodGet, "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dmy-config&watch=1",
			authorization.Attributes{Verb: "watch", ResourceRequest: true, APIVersion: "v1", Resource: "configmaps", Namespace: "default", Name: "my-config",
				FieldSelector: "metadata.name=my-config"},
			`configmaps "my-config" is forbidden: User "system:unsecured" cannot watch resource "configmaps" in API group "" in the namespace "default"`},
		{"discovery is a path", http.MethodGet, "/apis/apps/v1",
			authorization.Attributes{Verb: "get", Path: "/apis/apps/v1"},
			`forbidden: User "system:unsecured" cannot get path "/apis/apps/v1"`},
		{"so is the health check", http.MethodGet, "/healthz",
			authorization.Attributes{Verb: "get", Path: "/healthz"},
			`forbidden: User "system:unsecured" cannot get path "/healthz"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st metav1.Status
			if code := s.Do(tc.method, tc.path, "application/json", "{}", &st); code != http.StatusForbidden {
				t.Fatalf("%s %s: %d, want 403", tc.method, tc.path, code)
			}
			if st.Reason != metav1.StatusReasonForbidden || st.Message != tc.message {
				t.Errorf("%s %s: %s %q, want Forbidden %q", tc.method, tc.path, st.Reason, st.Message, tc.message)
			}
			authz.mu.Lock()
			got := authz.last
			authz.mu.Unlock()
			if got.User.Username != "system:unsecured" {
				t.Errorf("asked for user %q, want the plain port's system:unsecured", got.User.Username)
			}
			got.User = tc.want.User
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("attributes\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// The reviews ask the server's own authorizer, which the filter put in
// the request's context.
func TestTheAuthorizerIsInTheRequestContext(t *testing.T) {
	s := testserver.StartServer(t, func(c *apiserver.Config) {
		c.Authorizer = authorization.Union{allowOnly{"create", "selfsubjectaccessreviews"}}
	})
	var review struct {
		Status struct {
			Allowed bool   `json:"allowed"`
			Reason  string `json:"reason"`
		} `json:"status"`
	}
	body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"list","resource":"pods","namespace":"default"}}}`
	if code := s.Do(http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "application/json", body, &review); code != http.StatusCreated {
		t.Fatalf("SelfSubjectAccessReview: %d", code)
	}
	if review.Status.Allowed || !strings.Contains(review.Status.Reason, "only create selfsubjectaccessreviews") {
		t.Errorf("may I list pods: %+v, want no, with the authorizer's reason", review.Status)
	}
}

// allowOnly allows one verb on one resource and says so otherwise.
type allowOnly struct{ verb, resource string }

func (o allowOnly) Authorize(_ context.Context, a authorization.Attributes) (authorization.Decision, string, error) {
	if a.Verb == o.verb && a.Resource == o.resource {
		return authorization.Allow, "", nil
	}
	return authorization.NoOpinion, "only " + o.verb + " " + o.resource, nil
}
