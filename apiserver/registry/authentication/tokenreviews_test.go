package authentication_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
	"github.com/mkube/mkube/internal/testserver"
)

// startWithTokens is a server that issues service-account tokens and
// believes them, and the token file's s3cret (alice).
func startWithTokens(t *testing.T) *testserver.Server {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := serviceaccount.New(serviceaccount.Config{SigningKey: key})
	if err != nil {
		t.Fatal(err)
	}
	file, err := authentication.ParseTokenFile(strings.NewReader("s3cret,alice,1001,dev\n"), "tokens.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	return testserver.StartServer(t, func(c *apiserver.Config) {
		a := authentication.New(nil, nil)
		a.Tokens, a.APIAudiences = []authentication.TokenAuthenticator{file, tokens}, tokens.APIAudiences()
		c.Authenticator, c.ServiceAccountTokens = a, tokens
	})
}

func review(token string, audiences ...string) string {
	spec := map[string]any{"token": token}
	if len(audiences) > 0 {
		spec["audiences"] = audiences
	}
	data, _ := json.Marshal(map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})
	return string(data)
}

func TestATokenReviewSaysWhoseTheTokenIs(t *testing.T) {
	s := startWithTokens(t)
	must := func(path, body string) {
		if code := s.Do("POST", path, "application/json", body, nil); code != http.StatusCreated {
			t.Fatalf("POST %s: %d", path, code)
		}
	}
	must("/api/v1/namespaces/default/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}`)
	must("/api/v1/namespaces/default/pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},
		"spec":{"serviceAccountName":"robot","containers":[{"name":"c","image":"nginx"}]}}`)
	issue := func(spec string) string {
		var tr authenticationv1.TokenRequest
		if code := s.Do("POST", "/api/v1/namespaces/default/serviceaccounts/robot/token", "application/json",
			`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":`+spec+`}`, &tr); code != http.StatusCreated {
			t.Fatalf("token %s: %d", spec, code)
		}
		return tr.Status.Token
	}
	podToken := issue(`{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"web"}}`)
	vaultToken := issue(`{"audiences":["vault"]}`)

	const apiAudience = "https://kubernetes.default.svc.cluster.local"
	tests := []struct {
		name      string
		before    func()
		body      string
		code      int
		user      string
		groups    []string
		audiences []string
		err       string // status.error, or the 400's message
	}{
		{name: "a pod's token is its service account's, in its namespace's groups", body: review(podToken), code: http.StatusCreated,
			user: "system:serviceaccount:default:robot", audiences: []string{apiAudience},
			groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}},
		{name: "a token file's token is its user's, for the API server", body: review("s3cret"), code: http.StatusCreated,
			user: "alice", groups: []string{"dev", "system:authenticated"}, audiences: []string{apiAudience}},
		{name: "a token for vault is vault's", body: review(vaultToken, "vault"), code: http.StatusCreated,
			user: "system:serviceaccount:default:robot", audiences: []string{"vault"},
			groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}},
		{name: "and not the API server's", body: review(vaultToken), code: http.StatusCreated,
			err: `[invalid bearer token, token audiences ["vault"] is invalid for the target audiences ["` + apiAudience + `"]]`},
		{name: "an unknown token is nobody's", body: review("guess"), code: http.StatusCreated, err: "invalid bearer token"},
		{name: "a review without a token is a bad request", body: review(""), code: http.StatusBadRequest,
			err: "token is required for TokenReview in authentication"},
		{name: "once the pod is deleted, its token is not believed",
			before: func() {
				if code := s.Do("DELETE", "/api/v1/namespaces/default/pods/web?gracePeriodSeconds=0", "", "", nil); code != http.StatusOK {
					t.Fatalf("delete web: %d", code)
				}
			},
			body: review(podToken), code: http.StatusCreated, err: "[invalid bearer token, service account token has been invalidated]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			var raw json.RawMessage
			code := s.Do("POST", "/apis/authentication.k8s.io/v1/tokenreviews", "application/json", tc.body, &raw)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, raw)
			}
			if code != http.StatusCreated {
				var st metav1.Status
				if json.Unmarshal(raw, &st); st.Message != tc.err {
					t.Fatalf("message %q, want %q", st.Message, tc.err)
				}
				return
			}
			var tr authenticationv1.TokenReview
			if err := json.Unmarshal(raw, &tr); err != nil {
				t.Fatal(err)
			}
			st := tr.Status
			if st.Authenticated != (tc.user != "") || st.Error != tc.err || st.User.Username != tc.user ||
				!slices.Equal(st.User.Groups, tc.groups) || !slices.Equal(st.Audiences, tc.audiences) {
				t.Fatalf("status %+v\nwant user %q groups %v audiences %v error %q", st, tc.user, tc.groups, tc.audiences, tc.err)
			}
			if strings.HasPrefix(tc.name, "a pod's token") && st.User.Extra["authentication.kubernetes.io/pod-name"][0] != "web" {
				t.Errorf("extra %v, want the pod's name", st.User.Extra)
			}
		})
	}
}
