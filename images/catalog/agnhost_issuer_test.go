package catalog

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
	"github.com/mkube/mkube/network/podnetwork/podnet"
)

// The OIDC discovery spec's pod verifies a token issued by the API
// server's token code against that server's discovery documents,
// fetched over TLS with the pod's in-cluster credentials; a token for
// another audience fails, and so does the fallback without the CA.
func TestIssuerDiscoveryVerifiesAProjectedToken(t *testing.T) {
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, serverKey := key(), key()
	ca, caPEM := issue(t, caKey, nil, nil, &x509.Certificate{Subject: pkix.Name{CommonName: "kubernetes"}, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign})
	_, serverPEM := issue(t, serverKey, ca, caKey, &x509.Certificate{DNSNames: []string{"kubernetes.default.svc.cluster.local"}})
	serving, err := tls.X509KeyPair(serverPEM, credentialBundle(t, serverKey, nil))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := serviceaccount.New(serviceaccount.Config{SigningKey: key(), Clock: clocktesting.NewFakePassiveClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := tokens.Discovery()
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "default", UID: "sa-1"}}
	token := func(audience string) []byte {
		issued, err := tokens.Issue(serviceaccount.Request{ServiceAccount: sa, Audiences: []string{audience}, ExpirationSeconds: 600})
		if err != nil {
			t.Fatal(err)
		}
		return []byte(issued.Token)
	}
	// The API server: its two documents, to a bearer of a token.
	mux := http.NewServeMux()
	for path, body := range map[string][]byte{serviceaccount.OpenIDConfigurationPath: docs.Configuration, serviceaccount.JWKSPath: docs.KeySet} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			w.Write(body)
		})
	}
	dialAPIServer := func(_ context.Context, _, address string) (net.Conn, error) {
		if address != "kubernetes.default.svc.cluster.local:443" {
			t.Errorf("the pod dialled %s", address)
		}
		pod, server := podnet.Pipe(&net.TCPAddr{}, &net.TCPAddr{})
		go lib.ServeHTTP(tls.Server(server, &tls.Config{Certificates: []tls.Certificate{serving}}), mux)
		return pod, nil
	}
	for _, tc := range []struct {
		audience string
		code     int
		log      string
	}{
		{"oidc-discovery-test", 0, "OK: Validated signature on JWT"},
		{"someone-else", 1, `oidc: expected audience "oidc-discovery-test" got ["someone-else"]`},
	} {
		fs := shell.NewFS()
		fs.WriteFile("/var/run/secrets/tokens/sa-token", token(tc.audience))
		fs.WriteFile("/var/run/secrets/kubernetes.io/serviceaccount/token", token(serviceaccount.DefaultIssuer))
		fs.WriteFile("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt", caPEM)
		var stderr strings.Builder
		p := shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: fs, Stderr: &stderr, Dial: dialAPIServer,
			Env: []string{"KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443"}})
		code, _ := agnhost(t.Context(), p, []string{"test-service-account-issuer-discovery", "--token-path", "/var/run/secrets/tokens/sa-token", "--audience", "oidc-discovery-test"}, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.log) {
			t.Errorf("audience %s: exit %d, want %d and %q in\n%s", tc.audience, code, tc.code, tc.log, stderr.String())
		}
		if tc.code != 0 && !strings.Contains(stderr.String(), "x509: certificate signed by unknown authority") {
			t.Errorf("the fallback without the cluster's CA should fail on its certificate:\n%s", stderr.String())
		}
	}
}
