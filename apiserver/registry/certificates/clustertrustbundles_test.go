package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// certPEM is a self-signed certificate, a CA if ca.
func certPEM(t *testing.T, cn string, ca bool) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: ca, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestClusterTrustBundlesAreValidatedAsKubernetesDoes(t *testing.T) {
	root, other, leaf := certPEM(t, "root", true), certPEM(t, "other", true), certPEM(t, "leaf", false)
	bundle := func(name, signer, pems string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pems}}
	}
	tests := []struct {
		name        string
		b, old      *certificatesv1.ClusterTrustBundle
		field, want string
	}{
		{"a bundle of no signer", bundle("roots", "", root+other), nil, "", ""},
		{"a signer's bundle is named after it", bundle("example.com:db:roots", "example.com/db", root), nil, "", ""},
		{"or it is refused", bundle("roots", "example.com/db", root), nil, "metadata.name",
			"ClusterTrustBundle for signerName example.com/db must be named with prefix example.com:db:"},
		{"no colon without a signer", bundle("a:b", "", root), nil, "metadata.name", `must not have ":" in its name`},
		{"the signer name's form", bundle("db:roots", "db", root), nil, "spec.signerName", "must be a fully qualified domain and path"},
		{"a leaf is no anchor", bundle("roots", "", leaf), nil, "spec.trustBundle", "entry 0 does not have the CA bit set"},
		{"not PEM at all", bundle("roots", "", "hello"), nil, "spec.trustBundle", "at least one trust anchor must be provided"},
		{"an anchor twice", bundle("roots", "", root+other+root), nil, "spec.trustBundle", "duplicate trust anchor (indices [0 2])"},
		{"another block type", bundle("roots", "", root+"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), nil,
			"spec.trustBundle", "entry 1 has bad block type: PRIVATE KEY"},
		{"the bundle may change", bundle("example.com:db:roots", "example.com/db", other), bundle("example.com:db:roots", "example.com/db", root), "", ""},
		{"the signer may not", bundle("example.com:db:roots", "example.com/web", root), bundle("example.com:db:roots", "example.com/db", root),
			"spec.signerName", "field is immutable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var old runtime.Object
			if tc.old != nil {
				old = tc.old
			}
			errs := ClusterTrustBundles.Validate(tc.b, old)
			if tc.field == "" {
				if len(errs) != 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Field == tc.field && strings.Contains(e.Error(), tc.want) {
					return
				}
			}
			t.Fatalf("errors %v, want one on %s saying %q", errs, tc.field, tc.want)
		})
	}
}
