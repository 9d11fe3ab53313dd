package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/apiserver/pki"
)

// startAPIServer starts an API server on c.URL's plain port and a free
// secure port, with the data (etcd, certificates) in dataDir; it returns
// the secure port.
func (c *cluster) startAPIServer(dataDir string, flags ...string) int {
	c.t.Helper()
	secure := freePort(c.t)
	c.start("apiserver", append([]string{"--port", portOf(c.URL), "--secure-port", fmt.Sprint(secure),
		"--bind-address", "127.0.0.1", "--data-dir", dataDir}, flags...)...)
	return secure
}

// The secure port, as seed 000 has every component use it: HTTPS with the
// CA the API server made at its first start, and admin.kubeconfig for
// kubectl. A second server on the same --cert-dir (a restart) keeps the CA
// and certificates, so kubeconfigs stay good.
func TestTheSecurePortServesKubectlWithTheAdminKubeconfig(t *testing.T) {
	t.Parallel()
	certDir := filepath.Join(t.TempDir(), "pki")
	kubeconfig := filepath.Join(certDir, "admin.kubeconfig")
	var firstCA []byte
	for round := range 2 {
		c := &cluster{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), logs: map[string]string{}}
		secure := c.startAPIServer(filepath.Join(t.TempDir(), "etcd"), "--cert-dir", certDir)
		c.waitReady()
		out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "get", "namespaces", "-o", "name").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "namespace/kube-system") {
			c.dumpLogs()
			t.Fatalf("round %d: kubectl over https://127.0.0.1:%d: %v\n%s", round, secure, err, out)
		}
		config, _ := os.ReadFile(kubeconfig)
		if !strings.Contains(string(config), fmt.Sprintf("server: https://127.0.0.1:%d", secure)) {
			t.Fatalf("round %d: admin.kubeconfig does not name the secure port %d:\n%s", round, secure, config)
		}
		// A client that does not trust mkube's CA is refused by TLS itself.
		if resp, err := http.Get(fmt.Sprintf("https://127.0.0.1:%d/version", secure)); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
			if err == nil {
				resp.Body.Close()
			}
			t.Fatalf("round %d: a client that does not trust the CA got: %v", round, err)
		}
		// Who each port takes the client for: the admin's certificate on the
		// secure port, anyone-as-a-master on the plain one.
		for _, tc := range []struct{ args, want []string }{
			{[]string{"--kubeconfig", kubeconfig}, []string{"kubernetes-admin", "[system:masters system:authenticated]"}},
			{[]string{"--server", c.URL}, []string{"system:unsecured", "[system:masters system:authenticated]"}},
		} {
			out, err := exec.Command("kubectl", append(tc.args, "--cache-dir", t.TempDir(), "auth", "whoami")...).CombinedOutput()
			for _, w := range tc.want {
				if err != nil || !strings.Contains(string(out), w) {
					t.Fatalf("round %d: kubectl %v auth whoami: %v\n%s\nwant %q", round, tc.args, err, out, w)
				}
			}
		}
		// The plain port asks nobody who they are, so it listens on
		// loopback only (--insecure-bind-address): from the host's other
		// address it is refused.
		if ip := nonLoopbackIPv4(); ip != "" {
			if conn, err := net.Dial("tcp", net.JoinHostPort(ip, portOf(c.URL))); err == nil {
				conn.Close()
				t.Errorf("round %d: the plain port answers on %s", round, ip)
			}
		}
		ca, _ := os.ReadFile(filepath.Join(certDir, "ca.crt"))
		if round == 0 {
			firstCA = ca
		} else if !bytes.Equal(ca, firstCA) {
			t.Fatal("a restart made a new CA")
		}
		// A certificate from another cluster's CA: 401, in Kubernetes' words.
		if code, body := foreignCertGet(t, certDir, fmt.Sprintf("https://127.0.0.1:%d/api/v1/namespaces", secure)); code != http.StatusUnauthorized ||
			!strings.Contains(body, `"reason":"Unauthorized"`) {
			t.Fatalf("round %d: a foreign certificate got %d %s, want 401 Unauthorized", round, code, body)
		}
	}
}

// foreignCertGet GETs url trusting the cluster's CA in certDir but
// presenting an admin certificate made by another CA.
func foreignCertGet(t *testing.T, certDir, url string) (int, string) {
	t.Helper()
	other, err := pki.Ensure(t.TempDir(), []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	clientCert, err := tls.LoadX509KeyPair(filepath.Join(other.Dir, "admin.crt"), filepath.Join(other.Dir, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{clientCert}}}}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// nonLoopbackIPv4 is one of the host's addresses other than loopback, ""
// if it has none.
func nonLoopbackIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok && !ipnet.IP.IsLoopback() && ipnet.IP.To4() != nil {
			return ipnet.IP.String()
		}
	}
	return ""
}
