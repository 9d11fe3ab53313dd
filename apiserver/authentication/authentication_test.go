package authentication

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/apiserver/pki"
)

var now = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestWhoSentTheRequest(t *testing.T) {
	ours, err := pki.Ensure(t.TempDir(), []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := pki.Ensure(t.TempDir(), []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	admin := cert(t, ours.Dir, "admin")
	tests := []struct {
		name   string
		tls    *tls.ConnectionState // nil: the plain port
		at     time.Time
		user   string
		groups []string
		err    func(error) bool
	}{
		{"the plain port is system:unsecured, a master", nil, now, Unsecured, []string{Masters, Authenticated}, nil},
		{"no certificate is anonymous", &tls.ConnectionState{}, now, Anonymous, []string{Unauthenticated}, nil},
		{"the CA's certificate names the user and groups", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{admin}}, now,
			"kubernetes-admin", []string{"system:masters", Authenticated}, nil},
		{"a component is authenticated too", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert(t, ours.Dir, "scheduler")}}, now,
			"system:kube-scheduler", []string{Authenticated}, nil},
		{"another CA's certificate is 401", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert(t, theirs.Dir, "admin")}}, now,
			"", nil, apierrors.IsUnauthorized},
		{"an expired certificate is 401", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{admin}}, now.Add(2 * 365 * 24 * time.Hour),
			"", nil, apierrors.IsUnauthorized},
		{"the server's own certificate is no client's", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert(t, ours.Dir, "apiserver")}}, now,
			"", nil, apierrors.IsUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api", nil)
			r.TLS = tc.tls
			a := New(ours.CA, clocktesting.NewFakePassiveClock(tc.at))
			a.Log = slog.New(slog.DiscardHandler)
			u, err := a.Authenticate(r)
			if tc.err != nil {
				if !tc.err(err) {
					t.Fatalf("got %v, %v", u, err)
				}
				return
			}
			if err != nil || u.Username != tc.user || !slices.Equal(u.Groups, tc.groups) {
				t.Fatalf("got %+v, %v; want %s %v", u, err, tc.user, tc.groups)
			}
		})
	}
}

func cert(t *testing.T, dir, name string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTheUnionTriesEachCredentialInTurn(t *testing.T) {
	ours, err := pki.Ensure(t.TempDir(), []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := pki.Ensure(t.TempDir(), []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	file, err := ParseTokenFile(strings.NewReader("s3cret,alice,1001,dev\n"), "tokens.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	foreign := []*x509.Certificate{cert(t, theirs.Dir, "admin")}
	tests := []struct {
		name      string
		certs     []*x509.Certificate
		header    string
		anonymous bool
		user      string // "" for 401
		groups    []string
	}{
		{"a token of the token file names its user", nil, "Bearer s3cret", true, "alice", []string{"dev", Authenticated}},
		{"an unknown token is 401, not anonymous", nil, "Bearer guess", true, "", nil},
		{"a bad certificate with a good token is the token's user", foreign, "Bearer s3cret", true, "alice", []string{"dev", Authenticated}},
		{"a bad certificate alone is 401", foreign, "", true, "", nil},
		{"a good certificate goes first", []*x509.Certificate{cert(t, ours.Dir, "admin")}, "Bearer s3cret", true,
			"kubernetes-admin", []string{"system:masters", Authenticated}},
		{"another scheme is no credential: anonymous", nil, "Basic YWRtaW46YWRtaW4=", true, Anonymous, []string{Unauthenticated}},
		{"no credential with --anonymous-auth=false is 401", nil, "", false, "", nil},
		{"a token still works with --anonymous-auth=false", nil, "Bearer s3cret", false, "alice", []string{"dev", Authenticated}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := New(ours.CA, clocktesting.NewFakePassiveClock(now))
			a.Log, a.Tokens, a.Anonymous = slog.New(slog.DiscardHandler), []TokenAuthenticator{file}, tc.anonymous
			r := httptest.NewRequest("GET", "/api", nil)
			r.TLS = &tls.ConnectionState{PeerCertificates: tc.certs}
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			u, err := a.Authenticate(r)
			if tc.user == "" {
				if !apierrors.IsUnauthorized(err) {
					t.Fatalf("got %+v, %v; want 401", u, err)
				}
				return
			}
			if err != nil || u.Username != tc.user || !slices.Equal(u.Groups, tc.groups) {
				t.Fatalf("got %+v, %v; want %s %v", u, err, tc.user, tc.groups)
			}
			if tc.user == "alice" && r.Header.Get("Authorization") != "" {
				t.Error("the believed token is still in the request's headers")
			}
		})
	}
}

func TestAStaticTokenIsForTheAPIServersAudiencesOnly(t *testing.T) {
	file, err := ParseTokenFile(strings.NewReader("s3cret,alice,1001\n"), "tokens.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	a := New(nil, nil)
	a.Tokens, a.APIAudiences = []TokenAuthenticator{file}, []string{"https://kubernetes.default.svc"}
	resp, err := a.AuthenticateToken(t.Context(), "s3cret", []string{"https://kubernetes.default.svc", "vault"})
	if err != nil || !slices.Equal(resp.Audiences, []string{"https://kubernetes.default.svc"}) {
		t.Fatalf("for the API server: %+v, %v", resp, err)
	}
	if _, err := a.AuthenticateToken(t.Context(), "s3cret", []string{"vault"}); err == nil || err.Error() != "invalid bearer token" {
		t.Fatalf("for vault: %v, want invalid bearer token", err)
	}
}
