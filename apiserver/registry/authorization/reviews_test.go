package authorization_test

import (
	"net/http"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authorization"
	rbacauthz "github.com/mkube/mkube/apiserver/authorization/rbac"
	"github.com/mkube/mkube/apiserver/registry/rbac"
	"github.com/mkube/mkube/internal/testserver"
)

const group = "/apis/authorization.k8s.io/v1/"

// startRBAC is a server with --authorization-mode=RBAC, the default
// policy, and jane allowed to read pods in default. The plain port is
// system:unsecured, a master.
func startRBAC(t *testing.T) *testserver.Server {
	p := rbacauthz.NewPolicy()
	s := testserver.StartServer(t, func(c *apiserver.Config) {
		c.Authorizer = authorization.Chain([]string{authorization.ModeRBAC}, p, nil)
	})
	if err := rbac.Start(t.Context(), s.API, p, nil); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct{ path, body string }{
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",` +
			`"metadata":{"name":"pod-reader"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","watch","list"]}]}`},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding",` +
			`"metadata":{"name":"read-pods"},"subjects":[{"kind":"User","name":"jane"}],"roleRef":{"kind":"Role","name":"pod-reader"}}`},
	} {
		if code := s.Do(http.MethodPost, o.path, "application/json", o.body, nil); code != http.StatusCreated {
			t.Fatalf("create %s: %d", o.path, code)
		}
	}
	// The authorizer learns of roles and bindings through separate
	// watches: the binding may arrive before its role.
	jane := authorization.Attributes{User: authenticationv1.UserInfo{Username: "jane"}, Verb: "list", ResourceRequest: true, Resource: "pods", Namespace: "default"}
	testserver.Eventually(t, "the authorizer to know pod-reader", func() (bool, string) {
		d, reason, _ := p.Authorize(t.Context(), jane)
		return d == authorization.Allow, reason
	})
	return s
}

func TestAccessReviewsAskTheServersAuthorizer(t *testing.T) {
	s := startRBAC(t)
	sar := func(spec string) string {
		return `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":` + spec + `}`
	}
	tests := []struct {
		name, path, body string
		allowed          bool
		reason           string
	}{
		{"jane may list pods in default", group + "subjectaccessreviews",
			sar(`{"user":"jane","resourceAttributes":{"verb":"list","resource":"pods","namespace":"default"}}`),
			true, `RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to User "jane"`},
		{"but not delete them", group + "subjectaccessreviews",
			sar(`{"user":"jane","resourceAttributes":{"verb":"delete","resource":"pods","namespace":"default","name":"web"}}`), false, ""},
		{"a group may be asked about without a user", group + "subjectaccessreviews",
			sar(`{"groups":["system:unauthenticated"],"nonResourceAttributes":{"verb":"get","path":"/healthz"}}`),
			true, `RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" to Group "system:unauthenticated"`},
		{"a LocalSubjectAccessReview asks within its namespace", group + "namespaces/default/localsubjectaccessreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"default"},` +
				`"spec":{"user":"jane","resourceAttributes":{"verb":"get","resource":"pods","namespace":"default","name":"web"}}}`, true,
			`RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to User "jane"`},
		{"the asker itself, a master on the plain port, may do anything", group + "selfsubjectaccessreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"delete","resource":"nodes"}}}`, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var review struct {
				Status authorizationv1.SubjectAccessReviewStatus `json:"status"`
			}
			if code := s.Do(http.MethodPost, tc.path, "application/json", tc.body, &review); code != http.StatusCreated {
				t.Fatalf("POST %s: %d", tc.path, code)
			}
			if review.Status.Allowed != tc.allowed || review.Status.Reason != tc.reason {
				t.Errorf("status %+v, want allowed %v, reason %q", review.Status, tc.allowed, tc.reason)
			}
		})
	}
}

func TestBadReviewsAreRefusedInKubernetesWords(t *testing.T) {
	s := startRBAC(t)
	tests := []struct {
		name, path, body string
		code             int
		message          string
	}{
		{"a review asks one question", group + "selfsubjectaccessreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{}}`, http.StatusUnprocessableEntity,
			`SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`},
		{"not two", group + "subjectaccessreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"jane","resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"verb":"get","path":"/"}}}`,
			http.StatusUnprocessableEntity, `spec.nonResourceAttributes: Invalid value: {"path":"/","verb":"get"}: cannot be specified in combination with resourceAttributes`},
		{"about somebody", group + "subjectaccessreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"resourceAttributes":{"verb":"get"}}}`,
			http.StatusUnprocessableEntity, `spec.user: Invalid value: "": at least one of user or group must be specified`},
		{"a local review stays in its namespace", group + "namespaces/default/localsubjectaccessreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"default"},"spec":{"user":"jane","resourceAttributes":{"verb":"get","namespace":"kube-system"}}}`,
			http.StatusUnprocessableEntity, `spec.resourceAttributes.namespace: Invalid value: "kube-system": must match metadata.namespace`},
		{"the one of its path", group + "namespaces/default/localsubjectaccessreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"kube-system"},"spec":{"user":"jane","resourceAttributes":{"verb":"get","namespace":"kube-system"}}}`,
			http.StatusBadRequest, `spec.resourceAttributes.namespace must match namespace: default`},
		{"a rules review needs a namespace", group + "selfsubjectrulesreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{}}`, http.StatusBadRequest, `no namespace on request`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st metav1.Status
			if code := s.Do(http.MethodPost, tc.path, "application/json", tc.body, &st); code != tc.code || !strings.Contains(st.Message, tc.message) {
				t.Errorf("%d %q\nwant %d %q", code, st.Message, tc.code, tc.message)
			}
		})
	}
}

// kubectl auth can-i --list: a master's rules are cluster-admin's.
func TestASelfSubjectRulesReviewListsTheRulesOfTheAsker(t *testing.T) {
	s := startRBAC(t)
	var review authorizationv1.SelfSubjectRulesReview
	body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"default"}}`
	if code := s.Do(http.MethodPost, group+"selfsubjectrulesreviews", "application/json", body, &review); code != http.StatusCreated {
		t.Fatalf("SelfSubjectRulesReview: %d", code)
	}
	r, n := review.Status.ResourceRules, review.Status.NonResourceRules
	if len(r) == 0 || r[0].Resources[0] != "*" || r[0].APIGroups[0] != "*" || r[0].Verbs[0] != "*" ||
		len(n) == 0 || n[0].NonResourceURLs[0] != "*" || review.Status.Incomplete {
		t.Errorf("status %+v, want cluster-admin's * rules first (system:masters is bound to it)", review.Status)
	}
}
