package secureserving

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// selfSignedLifetime is client-go's GenerateSelfSignedCertKey's: a year.
const selfSignedLifetime = 365 * 24 * time.Hour

// GivenPair is the certificate of --tls-cert-file and
// --tls-private-key-file, which go together; given is false when neither
// is set, and the caller makes a self-signed one instead.
func GivenPair(certFile, keyFile string) (cert tls.Certificate, given bool, err error) {
	if certFile == "" && keyFile == "" {
		return tls.Certificate{}, false, nil
	}
	if certFile == "" || keyFile == "" {
		return tls.Certificate{}, true, errors.New("--tls-cert-file and --tls-private-key-file go together")
	}
	cert, err = tls.LoadX509KeyPair(certFile, keyFile)
	return cert, true, err
}

// SelfSigned is a serving certificate and its key (PEM) that sign
// themselves, as client-go's GenerateSelfSignedCertKey makes for
// kube-scheduler, kube-controller-manager and the kubelet when none is
// given: its subject "host@<unix seconds>", valid for dnsNames and ips for
// a year. It may sign (a CA), so that a client can trust this very
// certificate, the only thing that vouches for it.
func SelfSigned(host string, dnsNames []string, ips []net.IP, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	template := &x509.Certificate{SerialNumber: serial,
		Subject:     pkix.Name{CommonName: fmt.Sprintf("%s@%d", host, now.Unix())},
		NotBefore:   now.Add(-time.Hour), // a little clock skew
		NotAfter:    now.Add(selfSignedLifetime),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		DNSNames: dnsNames, IPAddresses: ips}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// selfSigned is a component's certificate when none is given: valid for
// localhost, 127.0.0.1, ::1, the host name and the bind address, kept in
// memory only.
func selfSigned(bindAddress string, now time.Time) (tls.Certificate, error) {
	dnsNames, ips := []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}
	if name, err := os.Hostname(); err == nil && name != "" {
		dnsNames = append(dnsNames, name)
	}
	if ip := net.ParseIP(bindAddress); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		ips = append(ips, ip)
	}
	certPEM, keyPEM, err := SelfSigned("localhost", dnsNames, ips, now)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
