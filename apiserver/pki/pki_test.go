package pki

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

var now = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestEnsureCreatesOnceAndSignsWhatClientsNeed(t *testing.T) {
	dir := t.TempDir()
	hosts := []string{"localhost", "127.0.0.1", "kubernetes.default.svc", "10.96.0.1"}
	p, err := Ensure(dir, hosts, now)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(p.CA)
	serving := readCert(t, p.Serving)
	for _, name := range []string{"localhost", "kubernetes.default.svc", "127.0.0.1", "10.96.0.1"} {
		if err := serving.VerifyHostname(name); err != nil {
			t.Errorf("the serving certificate is not valid for %s: %v", name, err)
		}
	}
	if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("the CA does not vouch for the serving certificate: %v", err)
	}
	admin := readCert(t, filepath.Join(dir, "admin.crt"))
	if admin.Subject.CommonName != "kubernetes-admin" || !slices.Equal(admin.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("admin subject: %v", admin.Subject)
	}
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the admin certificate is not a client certificate of the CA: %v", err)
	}
	if got := readCert(t, filepath.Join(dir, "scheduler.crt")).Subject.CommonName; got != "system:kube-scheduler" {
		t.Errorf("scheduler CN %q", got)
	}

	again, err := Ensure(dir, hosts, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !again.CA.Equal(p.CA) || !readCert(t, again.Serving).Equal(serving) {
		t.Fatal("a restart made new certificates instead of reusing them")
	}
}

func TestTheAdminKubeconfigTrustsTheCAAndPresentsTheAdmin(t *testing.T) {
	p, err := Ensure(t.TempDir(), []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	path, err := p.WriteKubeconfig(Admin, "https://127.0.0.1:6443")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || len(cfg.TLSClientConfig.CAData) == 0 || len(cfg.TLSClientConfig.CertData) == 0 || len(cfg.TLSClientConfig.KeyData) == 0 {
		t.Fatalf("kubeconfig: host %s, ca %d, cert %d, key %d bytes", cfg.Host, len(cfg.TLSClientConfig.CAData), len(cfg.TLSClientConfig.CertData), len(cfg.TLSClientConfig.KeyData))
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s is not PEM", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// A learner's own user: signed by the cluster's CA, named by CN and O,
// made once, and reused by a restart.
func TestEnsureClientSignsALearnersUserOnce(t *testing.T) {
	dir := t.TempDir()
	p, err := Ensure(dir, []string{"localhost"}, now)
	if err != nil {
		t.Fatal(err)
	}
	jane := Identity{Name: "jane", User: "jane", Groups: []string{"developers"}}
	if err := p.EnsureClient(jane, now); err != nil {
		t.Fatal(err)
	}
	cert := readCert(t, filepath.Join(dir, "jane.crt"))
	roots := x509.NewCertPool()
	roots.AddCert(p.CA)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("jane's certificate is not a client certificate of the CA: %v", err)
	}
	if cert.Subject.CommonName != "jane" || !slices.Equal(cert.Subject.Organization, []string{"developers"}) {
		t.Errorf("jane's subject: %v, want CN jane, O developers", cert.Subject)
	}
	again, err := Ensure(dir, []string{"localhost"}, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := again.EnsureClient(jane, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !readCert(t, filepath.Join(dir, "jane.crt")).Equal(cert) {
		t.Error("a second EnsureClient made a new certificate for jane")
	}
}

// What kubeadm leaves on each machine: a kubeconfig per component and per
// node, each presenting its own identity, in a directory that holds the
// CA's certificate but not its key.
func TestComponentKubeconfigsPresentEachComponentsOwnIdentity(t *testing.T) {
	p, err := Ensure(t.TempDir(), []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kubeconfigs")
	if err := p.WriteComponentKubeconfigs(dir, "https://apiserver:6443", []string{"node01", "node02"}, now); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file, user string
		groups     []string
	}{
		{"controller-manager.kubeconfig", "system:kube-controller-manager", nil},
		{"scheduler.kubeconfig", "system:kube-scheduler", nil},
		{"kubelet-fleet.kubeconfig", "mkube:kubelet-fleet", []string{"mkube:kubelet-fleets"}},
		{"kubelet-node01.kubeconfig", "system:node:node01", []string{"system:nodes"}},
		{"kubelet-node02.kubeconfig", "system:node:node02", []string{"system:nodes"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != "https://apiserver:6443" {
				t.Errorf("server %s, want https://apiserver:6443", cfg.Host)
			}
			block, _ := pem.Decode(cfg.TLSClientConfig.CertData)
			if block == nil {
				t.Fatal("no client certificate")
			}
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if cert.Subject.CommonName != tc.user || !slices.Equal(cert.Subject.Organization, tc.groups) {
				t.Errorf("subject CN %q O %v, want %q %v", cert.Subject.CommonName, cert.Subject.Organization, tc.user, tc.groups)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "ca.crt")); err != nil {
		t.Errorf("the CA's certificate is not beside the kubeconfigs: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ca.key")); err == nil {
		t.Error("the CA's key is in the components' directory")
	}
}

// The front proxy's certificate is vouched for by its own CA only: an
// aggregated API server that trusts front-proxy-ca for its request
// headers believes no other client, and the cluster CA does not make the
// proxy a user of the API server.
func TestTheFrontProxyClientHasACAOfItsOwn(t *testing.T) {
	dir := t.TempDir()
	p, err := Ensure(dir, []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	proxyRoots, clusterRoots := x509.NewCertPool(), x509.NewCertPool()
	proxyRoots.AddCert(p.FrontProxyCA)
	clusterRoots.AddCert(p.CA)
	client := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	proxy := readCert(t, filepath.Join(dir, "front-proxy-client.crt"))
	if proxy.Subject.CommonName != "front-proxy-client" {
		t.Errorf("front proxy CN %q", proxy.Subject.CommonName)
	}
	if _, err := proxy.Verify(x509.VerifyOptions{Roots: proxyRoots, CurrentTime: now, KeyUsages: client}); err != nil {
		t.Errorf("front-proxy-ca does not vouch for the proxy: %v", err)
	}
	if _, err := proxy.Verify(x509.VerifyOptions{Roots: clusterRoots, CurrentTime: now, KeyUsages: client}); err == nil {
		t.Error("the cluster CA vouches for the proxy")
	}
	admin := readCert(t, filepath.Join(dir, "admin.crt"))
	if _, err := admin.Verify(x509.VerifyOptions{Roots: proxyRoots, CurrentTime: now, KeyUsages: client}); err == nil {
		t.Error("front-proxy-ca vouches for the admin")
	}
	again, err := Ensure(dir, []string{"127.0.0.1"}, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !again.FrontProxyCA.Equal(p.FrontProxyCA) || !readCert(t, filepath.Join(dir, "front-proxy-client.crt")).Equal(proxy) {
		t.Error("a restart made a new front proxy CA or certificate")
	}
}
