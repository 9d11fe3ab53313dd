package authorization

import (
	"context"
	"errors"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// fixed answers the same for every request.
type fixed struct {
	d      Decision
	reason string
	err    error
}

func (f fixed) Authorize(context.Context, Attributes) (Decision, string, error) {
	return f.d, f.reason, f.err
}

func TestUnion(t *testing.T) {
	broken := errors.New("role x not found")
	tests := []struct {
		name       string
		u          Union
		want       Decision
		wantReason string
		wantErr    bool
	}{
		{"the first that allows decides", Union{fixed{d: NoOpinion, reason: "no"}, fixed{d: Allow, reason: "yes"}, fixed{d: Deny}}, Allow, "yes", false},
		{"a deny stops the chain before a later allow", Union{fixed{d: Deny, reason: "never"}, fixed{d: Allow}}, Deny, "never", false},
		{"with no decision, every reason is kept, one a line", Union{fixed{reason: "a"}, fixed{}, fixed{reason: "b"}}, NoOpinion, "a\nb", false},
		{"an evaluation error does not forbid if a later member allows", Union{fixed{err: broken}, fixed{d: Allow}}, Allow, "", false},
		{"and is reported when nothing allows", Union{fixed{err: broken}}, NoOpinion, "", true},
		{"an empty chain has no opinion", Union{}, NoOpinion, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := tc.u.Authorize(context.Background(), Attributes{})
			if d != tc.want || reason != tc.wantReason || (err != nil) != tc.wantErr {
				t.Errorf("Authorize = %v, %q, %v; want %v, %q, error %v", d, reason, err, tc.want, tc.wantReason, tc.wantErr)
			}
		})
	}
}

func TestSystemMastersMayDoAnythingWhateverTheModes(t *testing.T) {
	chain := Chain([]string{ModeRBAC}, fixed{d: NoOpinion}, nil)
	admin := Attributes{User: authenticationv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters", "system:authenticated"}},
		Verb: "delete", ResourceRequest: true, Resource: "nodes", Name: "node01"}
	if d, _, _ := chain.Authorize(context.Background(), admin); d != Allow {
		t.Errorf("a member of system:masters: %v, want Allow", d)
	}
	admin.User.Groups = []string{"system:authenticated"}
	if d, _, _ := chain.Authorize(context.Background(), admin); d != NoOpinion {
		t.Errorf("the same user out of system:masters, RBAC silent: %v, want NoOpinion", d)
	}
	if d, _, _ := Chain([]string{ModeAlwaysAllow}, nil, nil).Authorize(context.Background(), admin); d != Allow {
		t.Errorf("AlwaysAllow: %v, want Allow", d)
	}
}

func TestParseModes(t *testing.T) {
	tests := []struct {
		name, flag string
		want       []string
		err        string
	}{
		{"RBAC alone, the default", "RBAC", []string{"RBAC"}, ""},
		{"a list keeps its order", "RBAC,AlwaysAllow", []string{"RBAC", "AlwaysAllow"}, ""},
		{"spaces around names are dropped", " AlwaysAllow , RBAC", []string{"AlwaysAllow", "RBAC"}, ""},
		{"an unknown mode is refused in kube-apiserver's words", "ABAC", nil, `authorization-mode "ABAC" is not a valid mode`},
		{"Node then RBAC, kubeadm's and mkube's default", "Node,RBAC", []string{"Node", "RBAC"}, ""},
		{"a mode named twice is refused", "RBAC,RBAC", nil, `authorization-mode ["RBAC" "RBAC"] has mode specified more than once`},
		{"no mode at all is refused", "", nil, "at least one authorization-mode must be passed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseModes(tc.flag)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("ParseModes(%q) error %v, want %q", tc.flag, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ParseModes(%q) = %v, %v; want %v", tc.flag, got, err, tc.want)
			}
		})
	}
}

func TestForbiddenIsWordedAsKubeAPIServer(t *testing.T) {
	jane := authenticationv1.UserInfo{Username: "jane"}
	tests := []struct {
		name   string
		a      Attributes
		reason string
		want   string
	}{
		{"a list in a namespace", Attributes{User: jane, Verb: "list", ResourceRequest: true, Resource: "pods", Namespace: "default"}, "",
			`pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"`},
		{"a named cluster-scoped object", Attributes{User: jane, Verb: "get", ResourceRequest: true, Resource: "nodes", Name: "node01"}, "",
			`nodes "node01" is forbidden: User "jane" cannot get resource "nodes" in API group "" at the cluster scope`},
		{"a subresource of another group", Attributes{User: jane, Verb: "update", ResourceRequest: true, APIGroup: "apps", Resource: "deployments",
			Subresource: "scale", Namespace: "default", Name: "web"}, "",
			`deployments.apps "web" is forbidden: User "jane" cannot update resource "deployments/scale" in API group "apps" in the namespace "default"`},
		{"a path", Attributes{User: authenticationv1.UserInfo{Username: "system:anonymous"}, Verb: "get", Path: "/api"}, "",
			`forbidden: User "system:anonymous" cannot get path "/api"`},
		{"with a reason", Attributes{User: jane, Verb: "list", ResourceRequest: true, Resource: "pods", Namespace: "default"},
			`RBAC: role.rbac.authorization.k8s.io "pod-reader" not found`,
			`pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default": RBAC: role.rbac.authorization.k8s.io "pod-reader" not found`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Forbidden(tc.a, tc.reason)
			if !apierrors.IsForbidden(err) || err.Error() != tc.want {
				t.Errorf("Forbidden:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}
