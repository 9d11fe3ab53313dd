package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func request(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestValidateCertificateSigningRequest(t *testing.T) {
	pemCSR := request(t)
	valid := func() *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Request: pemCSR,
			SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}
	}
	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}
	denied := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}
	tests := []struct {
		name   string
		change func(r *certificatesv1.CertificateSigningRequest)
		want   string // the first error, "" for none
	}{
		{"a PEM request for a known signer and usage is valid", func(*certificatesv1.CertificateSigningRequest) {}, ""},
		{"a request that is not PEM is refused", func(r *certificatesv1.CertificateSigningRequest) { r.Spec.Request = []byte("x") },
			"spec.request: Invalid value: \"eA==\": PEM block type must be CERTIFICATE REQUEST"},
		{"a request names its signer", func(r *certificatesv1.CertificateSigningRequest) { r.Spec.SignerName = "" },
			"spec.signerName: Required value"},
		{"a signer name is a domain and a path", func(r *certificatesv1.CertificateSigningRequest) { r.Spec.SignerName = "example" },
			"spec.signerName: Invalid value: \"example\": must be a fully qualified domain and path of the form 'example.com/signer-name'"},
		{"a request asks for at least one usage", func(r *certificatesv1.CertificateSigningRequest) { r.Spec.Usages = nil },
			"spec.usages: Required value"},
		{"a certificate lives ten minutes at least", func(r *certificatesv1.CertificateSigningRequest) { r.Spec.ExpirationSeconds = ptr.To[int32](599) },
			"spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"},
		{"a request is not both approved and denied", func(r *certificatesv1.CertificateSigningRequest) {
			r.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{approved, denied}
		}, "status.conditions: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive"},
		{"Approved is only ever True", func(r *certificatesv1.CertificateSigningRequest) {
			r.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionFalse}}
		}, "status.conditions[0].status: Unsupported value: \"False\": supported values: \"True\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := valid()
			tt.change(r)
			errs := validate(r, nil)
			got := ""
			if len(errs) > 0 {
				got = errs[0].Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWritersOfARequest(t *testing.T) {
	stored := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Request: request(t),
		SignerName: "example.com/e2e", Usages: []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth}}}
	approve := func() *certificatesv1.CertificateSigningRequest {
		r := stored.DeepCopy()
		r.Status.Conditions = append(r.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue})
		return r
	}
	if _, errs := updateApproval(stored.DeepCopy(), approve(), time.Time{}); len(errs) > 0 {
		t.Errorf("approval may approve: %v", errs)
	}
	if _, errs := updateStatus(stored.DeepCopy(), approve(), time.Time{}); len(errs) == 0 || errs[0].Error() != `status.conditions: Forbidden: updates may not add a condition of type "Approved"` {
		t.Errorf("status may not approve, got %v", errs)
	}
	if errs := validate(approve(), stored.DeepCopy()); len(errs) == 0 {
		t.Errorf("the main resource may not approve")
	}
}
