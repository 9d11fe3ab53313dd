package server

import (
	"bytes"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestServingCertificate(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	ip := net.ParseIP("10.240.1.1")

	t.Run("without files, a self-signed certificate for the node is made in the cert dir and reused at the next start", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "pki")
		first, err := Serving{CertDir: dir}.TLSConfig("node01", []net.IP{ip}, now)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(first.Certificates[0].Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := leaf.CheckSignatureFrom(leaf); err != nil {
			t.Errorf("not self-signed: %v", err)
		}
		if err := leaf.VerifyHostname("node01"); err != nil {
			t.Error(err)
		}
		if err := leaf.VerifyHostname("10.240.1.1"); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "kubelet.key")); err != nil {
			t.Error(err)
		}
		again, err := Serving{CertDir: dir}.TLSConfig("node01", nil, now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Certificates[0].Certificate[0], first.Certificates[0].Certificate[0]) {
			t.Error("the second start made a new certificate instead of reusing kubelet.crt")
		}
	})

	t.Run("a pair that cannot be read is made anew", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "kubelet.crt"), []byte("half"), 0o644)
		if _, err := (Serving{CertDir: dir}).TLSConfig("node01", nil, now); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("--tls-cert-file and --tls-private-key-file are served as given", func(t *testing.T) {
		dir := t.TempDir()
		certPEM, keyPEM, err := SelfSigned("given", nil, now)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "c.pem"), certPEM, 0o644)
		os.WriteFile(filepath.Join(dir, "k.pem"), keyPEM, 0o600)
		cfg, err := Serving{CertFile: filepath.Join(dir, "c.pem"), KeyFile: filepath.Join(dir, "k.pem"), CertDir: filepath.Join(dir, "unused")}.TLSConfig("node01", nil, now)
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
		if err := leaf.VerifyHostname("given"); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "unused")); !os.IsNotExist(err) {
			t.Error("a cert dir was written although files were given")
		}
		if _, err := (Serving{CertFile: "x"}).TLSConfig("node01", nil, now); err == nil {
			t.Error("--tls-cert-file without --tls-private-key-file was accepted")
		}
	})
}
