package authentication

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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
			u, err := New(ours.CA, clocktesting.NewFakePassiveClock(tc.at)).Authenticate(r)
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
