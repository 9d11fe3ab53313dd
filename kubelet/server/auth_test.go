package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestRequestAttributesAreTheKubeletsNodesSubresources(t *testing.T) {
	tests := []struct {
		method, target, header string
		node, verb, sub        string
	}{
		{"GET", "/stats/summary", "", "node01", "get", "stats"},
		{"GET", "/stats", "", "node01", "get", "stats"},
		{"GET", "/statsz", "", "node01", "get", "proxy"}, // a prefix is not a subpath
		{"GET", "/metrics", "", "node01", "get", "metrics"},
		{"GET", "/metrics/resource", "", "node01", "get", "metrics"},
		{"GET", "/metrics/cadvisor", "", "node01", "get", "metrics"},
		{"GET", "/metrics/probes", "", "node01", "get", "metrics"},
		{"GET", "/logs/", "", "node01", "get", "log"},
		{"GET", "/spec/", "", "node01", "get", "spec"},
		{"GET", "/containerLogs/default/web/nginx", "", "node01", "get", "proxy"},
		{"POST", "/exec/default/web/nginx?command=ls", "", "node01", "create", "proxy"},
		{"GET", "/exec/default/web/nginx", "", "node01", "get", "proxy"}, // WebSocket
		{"POST", "/attach/default/web/nginx", "", "node01", "create", "proxy"},
		{"POST", "/portForward/default/web", "", "node01", "create", "proxy"},
		{"GET", "/healthz", "", "node01", "get", "proxy"},
		{"PUT", "/pods", "", "node01", "update", "proxy"},
		{"PATCH", "/pods", "", "node01", "patch", "proxy"},
		{"DELETE", "/pods", "", "node01", "delete", "proxy"},
		{"HEAD", "/healthz", "", "node01", "", "proxy"},
		{"GET", "/metrics/../stats/summary", "", "node01", "get", "stats"}, // cleaned first
		{"GET", "/nodes/fake-2/metrics/resource", "", "fake-2", "get", "metrics"},
		{"GET", "/nodes/fake-2/stats/summary", "fake-1", "fake-2", "get", "stats"},
		{"GET", "/metrics/resource", "fake-3", "fake-3", "get", "metrics"}, // the node proxy's header
	}
	s := New(nodesHost{nodes: []string{"node01"}}, "node01", clocktesting.NewFakeClock(time.Time{}), slog.New(slog.DiscardHandler))
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.target, nil)
		if tt.header != "" {
			req.Header.Set(NodeHeader, tt.header)
		}
		node, verb, sub := s.attributes(req)
		if node != tt.node || verb != tt.verb || sub != tt.sub {
			t.Errorf("%s %s: node %q verb %q subresource %q, want %q %q %q", tt.method, tt.target, node, verb, sub, tt.node, tt.verb, tt.sub)
		}
	}
}

// fakeReviewer knows the tokens of scraper (may get nodes/metrics of
// node01) and nobody (may do nothing); "broken" fails, as an API server
// that cannot be reached. It keeps the SubjectAccessReviews it was asked.
type fakeReviewer struct {
	asked []authorizationv1.SubjectAccessReviewSpec
}

func (f *fakeReviewer) ReviewToken(_ context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	switch token {
	case "scraper":
		return authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:scraper", Groups: []string{"system:serviceaccounts"}}, true, nil
	case "nobody":
		return authenticationv1.UserInfo{Username: "system:serviceaccount:default:nobody"}, true, nil
	case "broken":
		return authenticationv1.UserInfo{}, false, errors.New("connection refused")
	}
	return authenticationv1.UserInfo{}, false, nil
}

func (f *fakeReviewer) ReviewAccess(_ context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, string, error) {
	f.asked = append(f.asked, spec)
	ra := spec.ResourceAttributes
	if spec.User == "kube-apiserver-kubelet-client" {
		return true, "", nil
	}
	return spec.User == "system:serviceaccount:kube-system:scraper" && ra.Verb == "get" && ra.Resource == "nodes" &&
		ra.Subresource == "metrics" && ra.Name == "node01", "", nil
}

func TestPortAuthenticatesAndAuthorizesAsAKubeadmKubelet(t *testing.T) {
	ca, caKey := testCert(t, "kubernetes", nil, nil, nil)
	apiserverCert, _ := testCert(t, "kube-apiserver-kubelet-client", []string{"kubeadm:cluster-admins"}, ca, caKey)
	strangerCA, strangerKey := testCert(t, "stranger-ca", nil, nil, nil)
	stranger, _ := testCert(t, "kube-apiserver-kubelet-client", nil, strangerCA, strangerKey)
	cas := x509.NewCertPool()
	cas.AddCert(ca)

	kubeadm := Auth{ClientCAs: cas, TokenWebhook: true, Mode: Webhook}
	anonymousWebhook := Auth{Anonymous: true, ClientCAs: cas, TokenWebhook: true, Mode: Webhook}
	noWebhook := Auth{Anonymous: true, Mode: AlwaysAllow}
	tests := []struct {
		name   string
		auth   Auth
		method string
		target string
		token  string
		cert   *x509.Certificate
		code   int
		body   string
	}{
		{"anonymous, anonymous off", kubeadm, "GET", "/metrics/resource", "", nil, 401, "Unauthorized"},
		{"an unknown token", kubeadm, "GET", "/metrics/resource", "forged", nil, 401, "Unauthorized"},
		{"a token the API server cannot review", kubeadm, "GET", "/metrics/resource", "broken", nil, 401, "Unauthorized"},
		{"a token without RBAC", kubeadm, "GET", "/metrics/resource", "nobody", nil, 403,
			"Forbidden (user=system:serviceaccount:default:nobody, verb=get, resource=nodes, subresource=metrics)"},
		{"a token with nodes/metrics", kubeadm, "GET", "/metrics/resource", "scraper", nil, 200, "served"},
		{"the same token, another subresource", kubeadm, "GET", "/stats/summary", "scraper", nil, 403,
			"Forbidden (user=system:serviceaccount:kube-system:scraper, verb=get, resource=nodes, subresource=stats)"},
		{"the same token, exec", kubeadm, "POST", "/exec/default/web/nginx", "scraper", nil, 403,
			"Forbidden (user=system:serviceaccount:kube-system:scraper, verb=create, resource=nodes, subresource=proxy)"},
		{"the API server's client certificate", kubeadm, "POST", "/exec/default/web/nginx", "", apiserverCert, 200, "served"},
		{"a certificate of another CA, with a good token", kubeadm, "GET", "/metrics/resource", "scraper", stranger, 200, "served"},
		{"a certificate of another CA alone, anonymous on", anonymousWebhook, "GET", "/metrics/resource", "", stranger, 401, "Unauthorized"},
		{"anonymous on, Webhook: anonymous is asked about", anonymousWebhook, "GET", "/metrics/resource", "", nil, 403,
			"Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource=metrics)"},
		{"anonymous on: a bad token is still refused", anonymousWebhook, "GET", "/metrics/resource", "forged", nil, 401, "Unauthorized"},
		{"the defaults: anyone", noWebhook, "POST", "/exec/default/web/nginx", "", nil, 200, "served"},
		{"the defaults: a token is not even read", noWebhook, "GET", "/metrics/resource", "forged", nil, 200, "served"},
		{"the zero Auth: nobody", Auth{}, "GET", "/healthz", "", nil, 401, "Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev := &fakeReviewer{}
			s := New(nodesHost{nodes: []string{"node01"}}, "node01", clocktesting.NewFakeClock(time.Time{}), slog.New(slog.DiscardHandler))
			tt.auth.Reviewer = rev
			s.UseAuth(tt.auth)
			h := s.withAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("served")) }))
			req := httptest.NewRequest(tt.method, tt.target, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			if tt.cert != nil {
				req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tt.cert}}
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tt.code || w.Body.String() != tt.body {
				t.Errorf("%s %s: %d %q, want %d %q", tt.method, tt.target, w.Code, w.Body, tt.code, tt.body)
			}
		})
	}
}

func TestAnAuthenticatedUserIsInSystemAuthenticated(t *testing.T) {
	rev := &fakeReviewer{}
	s := New(nodesHost{nodes: []string{"node01"}}, "node01", clocktesting.NewFakeClock(time.Time{}), slog.New(slog.DiscardHandler))
	s.UseAuth(Auth{TokenWebhook: true, Mode: Webhook, Reviewer: rev})
	req := httptest.NewRequest("GET", "/metrics/resource", nil)
	req.Header.Set("Authorization", "Bearer scraper")
	s.withAuth(http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), req)
	if len(rev.asked) != 1 {
		t.Fatalf("%d SubjectAccessReviews, want 1", len(rev.asked))
	}
	got := rev.asked[0]
	want := authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "node01"}
	if *got.ResourceAttributes != want || len(got.Groups) != 2 || got.Groups[1] != "system:authenticated" {
		t.Errorf("SubjectAccessReview spec %+v %+v, want groups [system:serviceaccounts system:authenticated] and %+v", got, *got.ResourceAttributes, want)
	}
}

// testCert is a certificate for cn in groups, signed by parent (nil:
// self-signed, a CA).
func testCert(t *testing.T, cn string, groups []string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}
