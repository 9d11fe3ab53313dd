package kubeletclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A kubelet's port as httptest serves it: self-signed, asking for a
// client certificate, answering with the subject of the one it got.
func kubelet(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			w.Write([]byte("anonymous"))
			return
		}
		w.Write([]byte(r.TLS.PeerCertificates[0].Subject.CommonName))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, c *Client, url string) (string, error) {
	t.Helper()
	resp, err := (&http.Client{Transport: c.Transport()}).Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	return b.String(), nil
}

func TestTheAPIServersKubeletClient(t *testing.T) {
	k := kubelet(t)
	dir := t.TempDir()
	caFile := filepath.Join(dir, "kubelet-ca.crt")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: k.Certificate().Raw}), 0o644)

	t.Run("without any flag it speaks HTTPS, verifies nothing and presents no certificate, as kube-apiserver", func(t *testing.T) {
		c, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := get(t, c, k.URL); err != nil || got != "anonymous" {
			t.Errorf("got %q, %v; want anonymous", got, err)
		}
		var nilClient *Client
		if got, err := get(t, nilClient, k.URL); err != nil || got != "anonymous" {
			t.Errorf("a nil client: got %q, %v; want anonymous", got, err)
		}
	})

	t.Run("with --kubelet-certificate-authority a kubelet it did not sign is refused", func(t *testing.T) {
		other := filepath.Join(dir, "other.crt")
		writePair(t, other, filepath.Join(dir, "other.key"))
		c, err := New(Config{CAFile: other})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := get(t, c, k.URL); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("got %v, want a certificate error", err)
		}
		c, err = New(Config{CAFile: caFile})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := get(t, c, k.URL); err != nil {
			t.Errorf("the kubelet's own certificate as the CA: %v", err)
		}
	})

	t.Run("--kubelet-client-certificate is presented", func(t *testing.T) {
		// httptest's own pair stands for the API server's certificate.
		certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
		writePair(t, certFile, keyFile)
		c, err := New(Config{CertFile: certFile, KeyFile: keyFile})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := c.Dial(context.Background(), k.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
		if got, err := get(t, c, k.URL); err != nil || got != "kube-apiserver-kubelet-client" {
			t.Errorf("got %q, %v; want the certificate's CN", got, err)
		}
		if _, err := New(Config{CertFile: certFile}); err == nil {
			t.Error("a certificate without its key was accepted")
		}
	})
}

// writePair writes a self-signed client certificate, CN
// kube-apiserver-kubelet-client, and its key.
func writePair(t *testing.T, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kube-apiserver-kubelet-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}
