package client_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/mkube/mkube/apiserver/pki"
	"github.com/mkube/mkube/client"
)

// seen is what the fake API server saw of one request.
type seen struct {
	proto, user, asUser string
	asGroups            []string
	bearer              string
}

// tlsServer is an HTTPS server with the PKI's serving certificate that
// answers every GET with a pod named after what it saw.
func tlsServer(t *testing.T, p *pki.PKI) (*httptest.Server, chan seen) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(p.Serving, filepath.Join(p.Dir, "apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	requests := make(chan seen, 10)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{proto: r.Proto, asUser: r.Header.Get(authenticationv1.ImpersonateUserHeader),
			asGroups: r.Header.Values(authenticationv1.ImpersonateGroupHeader), bearer: r.Header.Get("Authorization")}
		if len(r.TLS.PeerCertificates) > 0 {
			s.user = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		requests <- s
		json.NewEncoder(w).Encode(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}})
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, requests
}

func TestAKubeconfigClientSpeaksHTTP2WithItsCertificateAndImpersonatesOnRequest(t *testing.T) {
	p, err := pki.Ensure(t.TempDir(), []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fleet := pki.Identity{Name: "kubelet-fleet", User: "mkube:kubelet-fleet", Groups: []string{"mkube:kubelet-fleets"}}
	if err := p.EnsureClient(fleet, time.Now()); err != nil {
		t.Fatal(err)
	}
	srv, requests := tlsServer(t, p)
	path, err := p.WriteKubeconfig(fleet, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.FromKubeconfig(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Identity(), (client.Identity{User: "mkube:kubelet-fleet", Groups: []string{"mkube:kubelet-fleets"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Identity() = %+v, want %+v", got, want)
	}
	node := c.Impersonate("system:node:node01", "system:nodes")
	tests := []struct {
		name string
		c    *client.Client
		want seen
	}{
		{"the client presents its certificate over HTTP/2", c, seen{proto: "HTTP/2.0", user: "mkube:kubelet-fleet"}},
		{"an impersonating client sends --as and --as-group's headers over the same connection", node,
			seen{proto: "HTTP/2.0", user: "mkube:kubelet-fleet", asUser: "system:node:node01", asGroups: []string{"system:nodes"}}},
		{"and the client it came from still speaks for itself", c, seen{proto: "HTTP/2.0", user: "mkube:kubelet-fleet"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{}
			if err := tc.c.Get(context.Background(), client.Pods, "default", "web", pod); err != nil || pod.Name != "web" {
				t.Fatalf("Get: %v, pod %q", err, pod.Name)
			}
			if got := <-requests; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("the server saw %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := node.Identity(); got.User != "system:node:node01" || !reflect.DeepEqual(got.Groups, []string{"system:nodes"}) {
		t.Errorf("the impersonating client's Identity() = %+v, want system:node:node01 in system:nodes", got)
	}
}

func TestAKubeconfigWithATokenSendsItAsABearer(t *testing.T) {
	p, err := pki.Ensure(t.TempDir(), []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv, requests := tlsServer(t, p)
	ca, _ := os.ReadFile(filepath.Join(p.Dir, "ca.crt"))
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "abc.def"}
	cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "x"
	path := filepath.Join(t.TempDir(), "token.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	c, err := client.FromKubeconfig(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), client.Pods, "default", "web", &corev1.Pod{}); err != nil {
		t.Fatal(err)
	}
	if got := <-requests; got.bearer != "Bearer abc.def" || got.user != "" {
		t.Errorf("the server saw %+v, want the bearer token and no certificate", got)
	}
	if c.Identity().User != "" {
		t.Errorf("a token's client claims to be %q; only the server knows who a token is", c.Identity().User)
	}
}

func TestAKubeconfigThatCannotBeReadIsAnErrorNamingTheFile(t *testing.T) {
	tests := []struct {
		name, content string
	}{
		{"a file that is not a kubeconfig", "not: [yaml"},
		{"a kubeconfig with no server", "apiVersion: v1\nkind: Config\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.kubeconfig")
			os.WriteFile(path, []byte(tc.content), 0o600)
			if _, err := client.FromKubeconfig(path, "test"); err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("FromKubeconfig: %v, want an error naming %s", err, path)
			}
		})
	}
	if _, err := client.FromKubeconfig(filepath.Join(t.TempDir(), "missing"), "test"); err == nil {
		t.Error("a missing kubeconfig gave a client")
	}
}

func TestAComponentTakesEitherServerOrKubeconfig(t *testing.T) {
	ctx := context.Background()
	if _, err := client.FromFlags(ctx, "http://127.0.0.1:8080", true, "x.kubeconfig", "test", time.Second); err == nil ||
		!strings.Contains(err.Error(), "are both given") {
		t.Errorf("--server and --kubeconfig: %v, want an error saying both are given", err)
	}
	c, err := client.FromFlags(ctx, "http://127.0.0.1:8080", false, "", "test", time.Second)
	if err != nil || c.Identity().User != "" {
		t.Errorf("--server alone: %v, identity %+v; want the plain port's client", err, c.Identity())
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := client.FromFlags(ended, "", false, filepath.Join(t.TempDir(), "not-yet.kubeconfig"), "test", time.Minute); err == nil ||
		!strings.Contains(err.Error(), "not written by the API server") {
		t.Errorf("a kubeconfig that never comes: %v, want an error once the wait ends", err)
	}
}
