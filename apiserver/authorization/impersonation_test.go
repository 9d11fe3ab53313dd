package authorization

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// onlyUsers lets its sender impersonate users (and nothing else: no
// groups, accounts, uids or extras).
type onlyUsers struct{}

func (onlyUsers) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if a.Verb == "impersonate" && a.Resource == "users" {
		return Allow, "", nil
	}
	return NoOpinion, "", nil
}

func TestImpersonate(t *testing.T) {
	master := authenticationv1.UserInfo{Username: "system:unsecured", Groups: []string{"system:masters", "system:authenticated"}}
	bob := authenticationv1.UserInfo{Username: "bob", Groups: []string{"system:authenticated"}}
	masters := Chain([]string{ModeRBAC}, onlyUsers{}, nil)
	headers := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name    string
		sender  authenticationv1.UserInfo
		authz   Authorizer
		h       http.Header
		want    authenticationv1.UserInfo
		ok      bool
		wantErr string
	}{
		{"a request without the headers is its sender's", master, masters, headers(), authenticationv1.UserInfo{}, false, ""},
		{"--as jane is jane, authenticated", master, masters, headers("Impersonate-User", "jane"),
			authenticationv1.UserInfo{Username: "jane", Groups: []string{"system:authenticated"}}, true, ""},
		{"--as alice --as-group manager keeps system:authenticated too", master, masters,
			headers("Impersonate-User", "alice", "Impersonate-Group", "manager"),
			authenticationv1.UserInfo{Username: "alice", Groups: []string{"manager", "system:authenticated"}}, true, ""},
		{"a service account is in its groups", master, masters, headers("Impersonate-User", "system:serviceaccount:ci:builder"),
			authenticationv1.UserInfo{Username: "system:serviceaccount:ci:builder",
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated"}}, true, ""},
		{"system:anonymous is not authenticated", master, masters, headers("Impersonate-User", "system:anonymous"),
			authenticationv1.UserInfo{Username: "system:anonymous"}, true, ""},
		{"extras are keyed in lower case", master, masters, headers("Impersonate-User", "jane", "Impersonate-Extra-Scopes", "view"),
			authenticationv1.UserInfo{Username: "jane", Groups: []string{"system:authenticated"},
				Extra: map[string]authenticationv1.ExtraValue{"scopes": {"view"}}}, true, ""},
		{"groups need a user", master, masters, headers("Impersonate-Group", "manager"), authenticationv1.UserInfo{}, false,
			`Internal error occurred: requested groups ["manager"], uid "" or extras map[] without impersonating a user`},
		{"bob may impersonate users", bob, onlyUsers{}, headers("Impersonate-User", "jane"),
			authenticationv1.UserInfo{Username: "jane", Groups: []string{"system:authenticated"}}, true, ""},
		{"but not groups, and is told so as kube-apiserver tells", bob, onlyUsers{}, headers("Impersonate-User", "jane", "Impersonate-Group", "system:masters"),
			authenticationv1.UserInfo{}, false,
			`groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope`},
		{"nor service accounts, which are checked in their namespace", bob, onlyUsers{}, headers("Impersonate-User", "system:serviceaccount:ci:builder"),
			authenticationv1.UserInfo{}, false,
			`serviceaccounts "builder" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ci"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := Impersonate(context.Background(), tc.authz, tc.sender, tc.h)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || ok != tc.ok || (ok && !reflect.DeepEqual(got, tc.want)) {
				t.Errorf("Impersonate = %+v, %v, %v; want %+v, %v", got, ok, err, tc.want, tc.ok)
			}
		})
	}
}
