package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
		ca, _ := os.ReadFile(filepath.Join(certDir, "ca.crt"))
		if round == 0 {
			firstCA = ca
		} else if !bytes.Equal(ca, firstCA) {
			t.Fatal("a restart made a new CA")
		}
	}
}
