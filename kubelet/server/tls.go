package server

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/mkube/mkube/internal/secureserving"
)

// The port's TLS, as a real kubelet sets it up (cmd/kubelet's
// InitializeTLS): the certificate of --tls-cert-file and
// --tls-private-key-file if given; else kubelet.crt and kubelet.key in
// --cert-dir, made self-signed at the first start and reused after, as
// the kubelet's GenerateSelfSignedCertKey does. Nothing signs such a
// certificate but itself, so a client either trusts that very file or
// skips verification: kube-apiserver without
// --kubelet-certificate-authority, metrics-server with
// --kubelet-insecure-tls, Prometheus with insecure_skip_verify.
//
// Client certificates are asked for, not required, and not judged by the
// handshake: auth.go verifies them against --client-ca-file, so that a
// request without one can still bring a bearer token, as on a real
// kubelet.

// Serving names the kubelet's serving certificate: CertFile and KeyFile
// (--tls-cert-file, --tls-private-key-file), else a self-signed pair kept
// in CertDir (--cert-dir; "" keeps it in memory only).
type Serving struct {
	CertFile, KeyFile string
	CertDir           string
}

// TLSConfig loads or makes the serving certificate for host (the node's
// name) and ips (its addresses), and returns the port's TLS settings.
// HTTP/1.1 only: exec, attach and port-forward upgrade the connection,
// which HTTP/2 cannot.
func (s Serving) TLSConfig(host string, ips []net.IP, now time.Time) (*tls.Config, error) {
	cert, err := s.certificate(host, ips, now)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
		ClientAuth: tls.RequestClientCert, NextProtos: []string{"http/1.1"}}, nil
}

func (s Serving) certificate(host string, ips []net.IP, now time.Time) (tls.Certificate, error) {
	if cert, given, err := secureserving.GivenPair(s.CertFile, s.KeyFile); given {
		return cert, err
	}
	certPath, keyPath := filepath.Join(s.CertDir, "kubelet.crt"), filepath.Join(s.CertDir, "kubelet.key")
	// A pair that cannot be read (none yet, or half-written by another
	// kubelet sharing the directory) is made anew, as the kubelet does
	// when it cannot read its own.
	if s.CertDir != "" {
		if cert, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil {
			return cert, nil
		}
	}
	certPEM, keyPEM, err := SelfSigned(host, ips, now)
	if err != nil {
		return tls.Certificate{}, err
	}
	if s.CertDir != "" {
		if err := os.MkdirAll(s.CertDir, 0o755); err != nil {
			return tls.Certificate{}, err
		}
		if err := writeAtomically(keyPath, keyPEM, 0o600); err != nil {
			return tls.Certificate{}, err
		}
		if err := writeAtomically(certPath, certPEM, 0o644); err != nil {
			return tls.Certificate{}, err
		}
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// SelfSigned is the kubelet's own serving certificate and key (PEM) for
// host (its node's name, or an address) and ips, subject
// "host@<unix seconds>" as the kubelet names its own; localhost and
// 127.0.0.1 are in it too, for a learner's curl on the node. It lasts a
// year: delete the files for a new one (a real kubelet can also rotate it,
// --rotate-server-certificates).
func SelfSigned(host string, ips []net.IP, now time.Time) (certPEM, keyPEM []byte, err error) {
	dnsNames, addrs := []string{host, "localhost"}, append([]net.IP{net.IPv4(127, 0, 0, 1)}, ips...)
	if ip := net.ParseIP(host); ip != nil {
		dnsNames, addrs = []string{"localhost"}, append(addrs, ip)
	}
	return secureserving.SelfSigned(host, dnsNames, addrs, now)
}

// writeAtomically writes data to path through a temporary file renamed
// over it: a reader sees the old file or the new one, never part of one.
func writeAtomically(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
