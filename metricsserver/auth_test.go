package metricsserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/internal/delegatedauth"
)

// testCA issues client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, name string) *testCA {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) pem() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}))
}

func (ca *testCA) client(t *testing.T, cn string, orgs ...string) *x509.Certificate {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

// fakeAPI answers TokenReviews: the token "good" is alice.
type fakeAPI struct{ reviews int }

func (f *fakeAPI) Do(_ context.Context, _, path string, body, out any) error {
	if path == "/apis/authentication.k8s.io/v1/tokenreviews" {
		f.reviews++
		review := out.(*authenticationv1.TokenReview)
		review.Spec = body.(*authenticationv1.TokenReview).Spec
		if review.Spec.Token == "good" {
			review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}}}
		}
	}
	return nil
}

func TestAuthenticationTriesTheFrontProxyClientCertificatesAndTokens(t *testing.T) {
	frontProxyCA, clientCA, stranger := newTestCA(t, "front-proxy-ca"), newTestCA(t, "kubernetes"), newTestCA(t, "stranger")
	api := &fakeAPI{}
	a := &delegatedAuth{api: api, reviewer: delegatedauth.New(api, testingclock.NewFakeClock(time.Unix(1_700_000_000, 0)), delegatedauth.APIServerTTLs)}
	if err := a.configure(map[string]string{"client-ca-file": clientCA.pem(), "requestheader-client-ca-file": frontProxyCA.pem(),
		"requestheader-allowed-names": `["front-proxy-client"]`, "requestheader-username-headers": `["X-Remote-User"]`,
		"requestheader-group-headers": `["X-Remote-Group"]`, "requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		peers   []*x509.Certificate
		headers map[string]string
		want    string // user and groups, or "error"
	}{
		{"the aggregator's front proxy names the user", []*x509.Certificate{frontProxyCA.client(t, "front-proxy-client")},
			map[string]string{"X-Remote-User": "bob", "X-Remote-Group": "devs"}, "bob [devs system:authenticated]"},
		{"a front proxy certificate of another name", []*x509.Certificate{frontProxyCA.client(t, "someone-else")},
			map[string]string{"X-Remote-User": "bob"}, "error"},
		{"a client certificate of the cluster's CA", []*x509.Certificate{clientCA.client(t, "carol", "ops")},
			map[string]string{"X-Remote-User": "mallory"}, "carol [ops system:authenticated]"},
		{"a certificate of an unknown CA", []*x509.Certificate{stranger.client(t, "eve")}, nil, "error"},
		{"a token the API server knows", nil, map[string]string{"Authorization": "Bearer good"}, "alice [system:authenticated]"},
		{"a token it does not", nil, map[string]string{"Authorization": "Bearer bad"}, "error"},
		{"nothing", nil, map[string]string{"X-Remote-User": "mallory"}, "system:anonymous [system:unauthenticated]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/apis/metrics.k8s.io/v1beta1/nodes", nil)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			user, err := a.authenticate(r, tc.peers)
			got := "error"
			if err == nil {
				got = user.Username + " [" + strings.Join(user.Groups, " ") + "]"
			}
			if got != tc.want {
				t.Errorf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer good")
	before := api.reviews
	a.authenticate(r, nil)
	if api.reviews != before {
		t.Error("a token reviewed within the cache's 10 s was reviewed again")
	}
}
