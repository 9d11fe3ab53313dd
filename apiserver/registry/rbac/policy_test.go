package rbac_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/mkube/mkube/apiserver/authorization"
	rbacauthz "github.com/mkube/mkube/apiserver/authorization/rbac"
	"github.com/mkube/mkube/apiserver/pki"
	"github.com/mkube/mkube/apiserver/registry/rbac"
	"github.com/mkube/mkube/internal/testserver"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// startRBAC runs a server with the default policy reconciled and fed to
// an RBAC authorizer, as cmd/apiserver does.
func startRBAC(t *testing.T) (*testserver.Server, *rbacauthz.Policy) {
	t.Helper()
	s := testserver.StartServer(t)
	p := rbacauthz.NewPolicy()
	if err := rbac.Start(t.Context(), s.API, p, quiet); err != nil {
		t.Fatal(err)
	}
	return s, p
}

func user(name string, groups ...string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: name, Groups: groups}
}

func resource(verb, group, res, sub, ns string) authorization.Attributes {
	return authorization.Attributes{Verb: verb, ResourceRequest: true, APIGroup: group, Resource: res, Subresource: sub, Namespace: ns}
}

func nonResource(path string) authorization.Attributes {
	return authorization.Attributes{Verb: "get", Path: path}
}

// The default policy grants what a new Kubernetes cluster grants.
func TestTheDefaultPolicyIsKubernetes(t *testing.T) {
	_, p := startRBAC(t)
	anonymous := user("system:anonymous", "system:unauthenticated")
	jane := user("jane", "system:authenticated")
	scheduler := user("system:kube-scheduler", "system:authenticated")
	controllers := user("system:kube-controller-manager", "system:authenticated")
	admin := user("kubernetes-admin", "system:masters", "system:authenticated")
	tests := []struct {
		name  string
		user  authenticationv1.UserInfo
		a     authorization.Attributes
		allow bool
	}{
		{"anyone may check the server's health", anonymous, nonResource("/healthz"), true},
		{"and read its version", anonymous, nonResource("/version"), true},
		{"but an anonymous user may not discover the API", anonymous, nonResource("/api"), false},
		{"nor list pods", anonymous, resource("list", "", "pods", "", ""), false},
		{"an authenticated user may discover the API", jane, nonResource("/apis/apps/v1"), true},
		{"and read the OpenAPI documents", jane, nonResource("/openapi/v3/api/v1"), true},
		{"and ask what it may do", jane, resource("create", "authorization.k8s.io", "selfsubjectaccessreviews", "", ""), true},
		{"and list it", jane, resource("create", "authorization.k8s.io", "selfsubjectrulesreviews", "", ""), true},
		{"and who it is", jane, resource("create", "authentication.k8s.io", "selfsubjectreviews", "", ""), true},
		{"but nothing more", jane, resource("list", "", "pods", "", "default"), false},
		{"the scheduler binds pods", scheduler, resource("create", "", "pods", "binding", "default"), true},
		{"and watches nodes", scheduler, resource("watch", "", "nodes", "", ""), true},
		{"but does not delete them", scheduler, resource("delete", "", "nodes", "", ""), false},
		{"the controller manager lists everything", controllers, resource("list", "apps", "replicasets", "", ""), true},
		{"cluster-admin, bound to system:masters, may do anything", admin, resource("deletecollection", "", "nodes", "", ""), true},
		{"including paths", admin, nonResource("/debug/pprof/profile"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.a.User = tc.user
			d, reason, err := p.Authorize(context.Background(), tc.a)
			if (d == authorization.Allow) != tc.allow || err != nil {
				t.Errorf("%s: %v %q %v, want allowed=%v", tc.user.Username, d, reason, err, tc.allow)
			}
		})
	}
}

// The components' client certificates (apiserver/pki) name users the
// default policy binds.
func TestEveryComponentCertificateHasItsRoles(t *testing.T) {
	s, _ := startRBAC(t)
	var list rbacv1.ClusterRoleBindingList
	if code := s.Do(http.MethodGet, clusterRoleBindings, "", "", &list); code != http.StatusOK {
		t.Fatalf("list: %d", code)
	}
	for _, id := range pki.Components {
		bound := slices.ContainsFunc(list.Items, func(b rbacv1.ClusterRoleBinding) bool {
			return slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == "User" && s.Name == id.User || s.Kind == "Group" && slices.Contains(id.Groups, s.Name)
			})
		})
		if !bound {
			t.Errorf("no ClusterRoleBinding names %s, the user of %s.crt", id.User, id.Name)
		}
	}
}
