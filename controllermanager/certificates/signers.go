package certificates

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// check says whether a request meets its signer's rules.
type check func(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error

// signers are the signers this controller is, with their rules
// (Kubernetes' isKubeAPIServerClient, isKubeletClient, isKubeletServing).
var signers = map[string]check{
	certificatesv1.KubeAPIServerClientSignerName:        apiServerClient,
	certificatesv1.KubeAPIServerClientKubeletSignerName: kubeletClient,
	certificatesv1.KubeletServingSignerName:             kubeletServing,
}

// apiServerClient: any subject, for client authentication only.
func apiServerClient(_ *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	hasClientAuth := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
		case certificatesv1.UsageClientAuth:
			hasClientAuth = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !hasClientAuth {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}

// kubeletClient: a node's identity (O system:nodes, CN
// system:node:<name>), no alternative names, client authentication.
func kubeletClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if err := nodeSubject(req); err != nil {
		return err
	}
	if len(req.DNSNames) > 0 || len(req.EmailAddresses) > 0 || len(req.IPAddresses) > 0 || len(req.URIs) > 0 {
		return errors.New("DNS, email, and IP address subjectAltNames are not allowed")
	}
	return onlyUsages(usages, certificatesv1.UsageClientAuth)
}

// kubeletServing: a node's identity, a DNS name or IP address to serve
// at, server authentication.
func kubeletServing(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	if err := nodeSubject(req); err != nil {
		return err
	}
	if len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return errors.New("DNS or IP subjectAltName is required")
	}
	if len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
		return errors.New("email and URI subjectAltNames are not allowed")
	}
	return onlyUsages(usages, certificatesv1.UsageServerAuth)
}

func nodeSubject(req *x509.CertificateRequest) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errors.New("subject organization is not system:nodes")
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errors.New("subject common name does not begin with system:node:")
	}
	return nil
}

// onlyUsages: digital signature, the extended usage, and key
// encipherment (which RSA keys need), nothing else.
func onlyUsages(usages []certificatesv1.KeyUsage, ext certificatesv1.KeyUsage) error {
	allowed := sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, ext)
	got := sets.New(usages...)
	if !got.Has(ext) || !got.Has(certificatesv1.UsageDigitalSignature) || !allowed.IsSuperset(got) {
		return fmt.Errorf("usages did not match %v", sets.List(allowed))
	}
	return nil
}

func parseRequest(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// authority is the CA that signs.
type authority struct {
	cert        *x509.Certificate
	key         crypto.Signer
	maxDuration time.Duration
}

// The backdate covers clocks a little behind the signer's, as Kubernetes'
// signer: five minutes, taken off the lifetime of certificates of eight
// hours or more only (so a ten-minute certificate still lives ten).
const (
	backdate = 5 * time.Minute
	short    = 8 * time.Hour
	minimum  = 10 * time.Minute
)

// sign issues a certificate for the request's subject, names and key,
// with the requested usages, living expirationSeconds (clamped to
// [ten minutes, maxDuration]) and never past the CA itself (Kubernetes'
// PermissiveSigningPolicy).
func (a authority) sign(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage, expirationSeconds *int32, now time.Time) ([]byte, error) {
	ttl := a.maxDuration
	if expirationSeconds != nil {
		ttl = min(max(time.Duration(*expirationSeconds)*time.Second, minimum), a.maxDuration)
	}
	keyUsage, extUsages, err := x509Usages(usages)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: req.Subject, DNSNames: req.DNSNames, IPAddresses: req.IPAddresses,
		EmailAddresses: req.EmailAddresses, URIs: req.URIs, KeyUsage: keyUsage, ExtKeyUsage: extUsages, BasicConstraintsValid: true,
		NotBefore: now.Add(-backdate), NotAfter: now.Add(ttl)}
	if ttl >= short {
		tmpl.NotAfter = now.Add(ttl - backdate)
	}
	if !now.Before(a.cert.NotAfter) {
		return nil, fmt.Errorf("refusing to sign a certificate that expired in the past: NotAfter=%v", a.cert.NotAfter)
	}
	if tmpl.NotAfter.After(a.cert.NotAfter) {
		tmpl.NotAfter = a.cert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, req.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

var keyUsages = map[certificatesv1.KeyUsage]x509.KeyUsage{
	certificatesv1.UsageSigning: x509.KeyUsageDigitalSignature, certificatesv1.UsageDigitalSignature: x509.KeyUsageDigitalSignature,
	certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment, certificatesv1.UsageKeyEncipherment: x509.KeyUsageKeyEncipherment,
	certificatesv1.UsageKeyAgreement: x509.KeyUsageKeyAgreement, certificatesv1.UsageDataEncipherment: x509.KeyUsageDataEncipherment,
	certificatesv1.UsageCertSign: x509.KeyUsageCertSign, certificatesv1.UsageCRLSign: x509.KeyUsageCRLSign,
	certificatesv1.UsageEncipherOnly: x509.KeyUsageEncipherOnly, certificatesv1.UsageDecipherOnly: x509.KeyUsageDecipherOnly,
}

var extKeyUsages = map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
	certificatesv1.UsageAny: x509.ExtKeyUsageAny, certificatesv1.UsageServerAuth: x509.ExtKeyUsageServerAuth,
	certificatesv1.UsageClientAuth: x509.ExtKeyUsageClientAuth, certificatesv1.UsageCodeSigning: x509.ExtKeyUsageCodeSigning,
	certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection, certificatesv1.UsageSMIME: x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageIPsecEndSystem: x509.ExtKeyUsageIPSECEndSystem, certificatesv1.UsageIPsecTunnel: x509.ExtKeyUsageIPSECTunnel,
	certificatesv1.UsageIPsecUser: x509.ExtKeyUsageIPSECUser, certificatesv1.UsageTimestamping: x509.ExtKeyUsageTimeStamping,
	certificatesv1.UsageOCSPSigning: x509.ExtKeyUsageOCSPSigning, certificatesv1.UsageMicrosoftSGC: x509.ExtKeyUsageMicrosoftServerGatedCrypto,
	certificatesv1.UsageNetscapeSGC: x509.ExtKeyUsageNetscapeServerGatedCrypto,
}

// x509Usages turns a request's usages into the certificate's, in a
// stable order.
func x509Usages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var ku x509.KeyUsage
	ext := sets.New[x509.ExtKeyUsage]()
	for _, u := range usages {
		if k, ok := keyUsages[u]; ok {
			ku |= k
		} else if e, ok := extKeyUsages[u]; ok {
			ext.Insert(e)
		} else {
			return 0, nil, fmt.Errorf("unrecognized usage values: %q", u)
		}
	}
	return ku, sets.List(ext), nil
}

// LoadCA reads a CA certificate and its private key, PEM (the API
// server's pki/ca.crt and ca.key).
func LoadCA(certPEM, keyPEM []byte) (*x509.Certificate, crypto.Signer, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("the CA's certificate or key is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	var key any
	switch kb.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(kb.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(kb.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(kb.Bytes)
	}
	if err != nil {
		return nil, nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New("the CA's key cannot sign")
	}
	return cert, signer, nil
}
