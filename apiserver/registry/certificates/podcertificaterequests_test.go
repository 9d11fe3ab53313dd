package certificates

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization"
)

// stubRequest is the kubelet's stub PKCS#10 request for key: empty,
// signed by it.
func stubRequest(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func p256(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// leafPEM is a certificate for pub from notBefore, for life, signed by a
// throwaway CA, in PEM.
func leafPEM(t *testing.T, pub crypto.PublicKey, notBefore time.Time, life time.Duration, dnsNames ...string) string {
	t.Helper()
	ca := p256(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "pod"},
		NotBefore: notBefore, NotAfter: notBefore.Add(life), DNSNames: dnsNames}
	parent := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, ca)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// pcr is a valid request of the kubelet's, for key.
func pcr(t *testing.T, key crypto.Signer) *certificatesv1.PodCertificateRequest {
	return &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "req-1", Namespace: "default"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/spiffe", PodName: "web", PodUID: "pod-uid",
			ServiceAccountName: "default", ServiceAccountUID: "sa-uid", NodeName: "node01", NodeUID: "node-uid",
			MaxExpirationSeconds: ptr.To[int32](86400), StubPKCS10Request: stubRequest(t, key)},
	}
}

// firstError is the first error's field and detail, "" for none.
func firstError(errs field.ErrorList) (string, string) {
	if len(errs) == 0 {
		return "", ""
	}
	return errs[0].Field, errs[0].Error()
}

func TestPodCertificateRequestsAreValidatedOnCreateAsKubernetesDoes(t *testing.T) {
	key := p256(t)
	rsa2048, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		change      func(r *certificatesv1.PodCertificateRequest)
		field, want string // the first error; "" for none
	}{
		{"the kubelet's request is valid", func(*certificatesv1.PodCertificateRequest) {}, "", ""},
		{"an Ed25519 key is taken", func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = stubRequest(t, ed) }, "", ""},
		{"the signer name needs a domain and a path", func(r *certificatesv1.PodCertificateRequest) { r.Spec.SignerName = "spiffe" },
			"spec.signerName", "must be a fully qualified domain and path of the form 'example.com/signer-name'"},
		{"the pod's name is a DNS subdomain", func(r *certificatesv1.PodCertificateRequest) { r.Spec.PodName = "Web" },
			"spec.podName", "a lowercase RFC 1123 subdomain"},
		{"the pod's uid is required", func(r *certificatesv1.PodCertificateRequest) { r.Spec.PodUID = "" },
			"spec.podUID", "must not be empty"},
		{"a uid is at most 128 bytes", func(r *certificatesv1.PodCertificateRequest) { r.Spec.NodeUID = types.UID(strings.Repeat("x", 129)) },
			"spec.nodeUID", "may not be more than 128 bytes"},
		{"the service account's uid is required", func(r *certificatesv1.PodCertificateRequest) { r.Spec.ServiceAccountUID = "" },
			"spec.serviceAccountUID", "must not be empty"},
		{"the node's name is a DNS subdomain", func(r *certificatesv1.PodCertificateRequest) { r.Spec.NodeName = "node_1" },
			"spec.nodeName", "a lowercase RFC 1123 subdomain"},
		{"maxExpirationSeconds is required", func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = nil },
			"spec.maxExpirationSeconds", "Required value: must be set"},
		{"an hour at least", func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = ptr.To[int32](3599) },
			"spec.maxExpirationSeconds", "Invalid value: 3599: must be in the range [3600, 7862400]"},
		{"91 days at most", func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = ptr.To[int32](7862401) },
			"spec.maxExpirationSeconds", "must be in the range [3600, 7862400]"},
		{"a day at most for a kubernetes.io signer", func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.SignerName = "kubernetes.io/spiffe"
			r.Spec.MaxExpirationSeconds = ptr.To[int32](86401)
		}, "spec.maxExpirationSeconds", "must be in the range [3600, 86400]"},
		{"the stub request is required", func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = nil },
			"spec", "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"},
		{"the stub request is DER PKCS#10", func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = []byte("hello") },
			"spec.stubPKCS10Request", "must be a valid PKCS#10 CSR"},
		{"RSA keys are 3072 or 4096 bits", func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = stubRequest(t, rsa2048) },
			"spec.stubPKCS10Request", `Invalid value: "2048-bit modulus": RSA keys must have modulus size 3072 or 4096`},
		{"elliptic keys are P256, P384 or P521", func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = stubRequest(t, p224) },
			"spec.stubPKCS10Request", "elliptic public keys must use curve P256, P384, or P521"},
		{"the request is signed by its key", func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.StubPKCS10Request[len(r.Spec.StubPKCS10Request)-1] ^= 0xff
		}, "spec.stubPKCS10Request", "invalid signature"},
		{"user annotations are domain-prefixed keys", func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.UnverifiedUserAnnotations = map[string]string{"path": "/x"}
		}, "spec.unverifiedUserAnnotations", `Invalid value: "path": must be a domain-prefixed key (such as "acme.io/foo")`},
		{"in any case", func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.UnverifiedUserAnnotations = map[string]string{"SPIFFE/Path-Overriding": "/x"}
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := pcr(t, key)
			tt.change(r)
			f, got := firstError(PodCertificateRequests.Validate(r, nil))
			if f != tt.field || !strings.Contains(got, tt.want) {
				t.Errorf("first error %s %q, want %s %q", f, got, tt.field, tt.want)
			}
		})
	}
}

func TestAPodCertificateRequestsSpecNeverChanges(t *testing.T) {
	key := p256(t)
	old := pcr(t, key)
	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	if errs := PodCertificateRequests.Validate(labelled, old); len(errs) > 0 {
		t.Errorf("a label: %v", errs)
	}
	moved := old.DeepCopy()
	moved.Spec.PodName = "other"
	if f, got := firstError(PodCertificateRequests.Validate(moved, old)); f != "spec" || !strings.Contains(got, "field is immutable") {
		t.Errorf("a new pod name: %s %q, want spec: field is immutable", f, got)
	}
}

func TestMaxExpirationSecondsDefaultsToADay(t *testing.T) {
	r := pcr(t, p256(t))
	r.Spec.MaxExpirationSeconds = nil
	PodCertificateRequests.Default(r)
	if r.Spec.MaxExpirationSeconds == nil || *r.Spec.MaxExpirationSeconds != 86400 {
		t.Errorf("maxExpirationSeconds = %v, want 86400", r.Spec.MaxExpirationSeconds)
	}
}

func TestAPodCertificateRequestsStatusIsWrittenOnceAsKubernetesChecksIt(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	res := NewPodCertificateRequests(clocktesting.NewFakePassiveClock(now))
	update := res.Subresources[0].Update
	key, other := p256(t), p256(t)
	notBefore := now.Add(-time.Minute)
	at := func(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }
	cond := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "Signer", Message: "by the test", LastTransitionTime: metav1.Time{Time: now}}
	}
	issued := func(chain string, notBefore, notAfter, refresh time.Time) certificatesv1.PodCertificateRequestStatus {
		return certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond(certificatesv1.PodCertificateRequestConditionTypeIssued, metav1.ConditionTrue)},
			CertificateChain: chain, NotBefore: at(notBefore), NotAfter: at(notAfter), BeginRefreshAt: at(refresh)}
	}
	hour := leafPEM(t, &key.PublicKey, notBefore, time.Hour)
	good := issued(hour, notBefore, notBefore.Add(time.Hour), notBefore.Add(15*time.Minute))
	denied := certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond(certificatesv1.PodCertificateRequestConditionTypeDenied, metav1.ConditionTrue)}}
	tests := []struct {
		name        string
		stored      certificatesv1.PodCertificateRequestStatus
		next        certificatesv1.PodCertificateRequestStatus
		field, want string
	}{
		{"a signer issues a certificate for the requested key", certificatesv1.PodCertificateRequestStatus{}, good, "", ""},
		{"with its intermediates after it", certificatesv1.PodCertificateRequestStatus{},
			issued(hour+leafPEM(t, &other.PublicKey, notBefore, time.Hour), notBefore, notBefore.Add(time.Hour), notBefore.Add(15*time.Minute)), "", ""},
		{"or denies the request", certificatesv1.PodCertificateRequestStatus{}, denied, "", ""},
		{"a denial carries no certificate", certificatesv1.PodCertificateRequestStatus{},
			certificatesv1.PodCertificateRequestStatus{Conditions: denied.Conditions, CertificateChain: hour},
			"status", "non-condition status fields must be empty when denying or failing the PodCertificateRequest"},
		{"nothing changes after issuance", good, denied, "status", "immutable after PodCertificateRequest is issued, denied, or failed"},
		{"nor after a denial", denied, good, "status", "immutable after PodCertificateRequest is issued, denied, or failed"},
		{"a pending request's status stays empty", certificatesv1.PodCertificateRequestStatus{},
			certificatesv1.PodCertificateRequestStatus{CertificateChain: hour},
			"status", `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`},
		{"one terminal condition at most", certificatesv1.PodCertificateRequestStatus{},
			certificatesv1.PodCertificateRequestStatus{Conditions: append(good.Conditions, cond(certificatesv1.PodCertificateRequestConditionTypeFailed, metav1.ConditionTrue))},
			"status.conditions[1].type", `There may be at most one condition with type "Issued", "Denied", or "Failed"`},
		{"a terminal condition is True", certificatesv1.PodCertificateRequestStatus{},
			certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond(certificatesv1.PodCertificateRequestConditionTypeFailed, metav1.ConditionFalse)}},
			"status.conditions[0].status", `Unsupported value: "False": supported values: "True"`},
		{"no other condition", certificatesv1.PodCertificateRequestStatus{},
			certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{cond("Approved", metav1.ConditionTrue)}},
			"status.conditions[0].type", `Unsupported value: "Approved": supported values: "Issued", "Denied", "Failed"`},
		{"a certificate for another key", certificatesv1.PodCertificateRequestStatus{},
			issued(leafPEM(t, &other.PublicKey, notBefore, time.Hour), notBefore, notBefore.Add(time.Hour), notBefore.Add(15*time.Minute)),
			"status.certificateChain", "leaf certificate was not issued to the requested public key"},
		{"no certificate at all", certificatesv1.PodCertificateRequestStatus{},
			issued("hello", notBefore, notBefore.Add(time.Hour), notBefore.Add(15*time.Minute)),
			"status.certificateChain", "issued certificate chain must contain at least one certificate"},
		{"a leaf's DNS names are sane", certificatesv1.PodCertificateRequestStatus{},
			issued(leafPEM(t, &key.PublicKey, notBefore, time.Hour, "web..default"), notBefore, notBefore.Add(time.Hour), notBefore.Add(15*time.Minute)),
			"status.certificateChain", "leaf certificate's DNSName should not contain '..'"},
		{"the times are required", certificatesv1.PodCertificateRequestStatus{},
			certificatesv1.PodCertificateRequestStatus{Conditions: good.Conditions, CertificateChain: hour},
			"status.notBefore", "must be present and consistent with the issued certificate"},
		{"notBefore is the leaf's", certificatesv1.PodCertificateRequestStatus{},
			issued(hour, notBefore.Add(time.Second), notBefore.Add(time.Hour), notBefore.Add(15*time.Minute)),
			"status.notBefore", "must be set to the NotBefore time encoded in the leaf certificate"},
		{"and near the API server's clock", certificatesv1.PodCertificateRequestStatus{},
			issued(leafPEM(t, &key.PublicKey, now.Add(-6*time.Minute), time.Hour), now.Add(-6*time.Minute), now.Add(54*time.Minute), now),
			"status.notBefore", "must be set to within 5 minutes of kube-apiserver's current time"},
		{"notAfter is the leaf's", certificatesv1.PodCertificateRequestStatus{},
			issued(hour, notBefore, notBefore.Add(2*time.Hour), notBefore.Add(15*time.Minute)),
			"status.notAfter", "must be set to the NotAfter time encoded in the leaf certificate"},
		{"a leaf lives an hour at least", certificatesv1.PodCertificateRequestStatus{},
			issued(leafPEM(t, &key.PublicKey, notBefore, 59*time.Minute), notBefore, notBefore.Add(59*time.Minute), notBefore.Add(15*time.Minute)),
			"status.certificateChain", "leaf certificate lifetime must be >= 1 hour"},
		{"and no longer than maxExpirationSeconds", certificatesv1.PodCertificateRequestStatus{},
			issued(leafPEM(t, &key.PublicKey, notBefore, 25*time.Hour), notBefore, notBefore.Add(25*time.Hour), notBefore.Add(15*time.Minute)),
			"status.certificateChain", "leaf certificate lifetime must be <= spec.maxExpirationSeconds (86400)"},
		{"refresh begins 10 minutes after notBefore at the earliest", certificatesv1.PodCertificateRequestStatus{},
			issued(hour, notBefore, notBefore.Add(time.Hour), notBefore.Add(9*time.Minute)),
			"status.beginRefreshAt", "must be at least 10 minutes after status.notBefore"},
		{"and 10 minutes before notAfter at the latest", certificatesv1.PodCertificateRequestStatus{},
			issued(hour, notBefore, notBefore.Add(time.Hour), notBefore.Add(51*time.Minute)),
			"status.beginRefreshAt", "must be at least 10 minutes before status.notAfter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stored := pcr(t, key)
			stored.Status = tt.stored
			next := stored.DeepCopy()
			next.Status = tt.next
			next.Spec.PodName = "the status subresource keeps the spec"
			out, errs := update(stored, next, time.Time{})
			f, got := firstError(errs)
			if f != tt.field || !strings.Contains(got, tt.want) {
				t.Fatalf("first error %s %q, want %s %q", f, got, tt.field, tt.want)
			}
			if r := out.(*certificatesv1.PodCertificateRequest); r.Spec.PodName != "web" {
				t.Errorf("spec.podName = %q: the status subresource wrote the spec", r.Spec.PodName)
			}
		})
	}
}

// signers allows "sign" on the names it holds.
type signers map[string]bool

func (s signers) Authorize(_ context.Context, a authorization.Attributes) (authorization.Decision, string, error) {
	if a.Verb == "sign" && a.APIGroup == "certificates.k8s.io" && a.Resource == "signers" && s[a.Name] {
		return authorization.Allow, "", nil
	}
	return authorization.NoOpinion, "", nil
}

func TestOnlyWhoMaySignForTheSignerWritesTheStatus(t *testing.T) {
	key := p256(t)
	stored := pcr(t, key)
	written := stored.DeepCopy()
	written.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue,
		Reason: "Policy", LastTransitionTime: metav1.Now()}}
	labelled := stored.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	tests := []struct {
		name    string
		allowed signers
		obj     runtime.Object
		want    string // "" allowed
	}{
		{"the signer's own name", signers{"example.com/spiffe": true}, written, ""},
		{"its domain's wildcard", signers{"example.com/*": true}, written, ""},
		{"another signer's", signers{"example.com/other": true}, written,
			`spec.signerName: Forbidden: User "jane" is not permitted to "sign" for signer "example.com/spiffe"`},
		{"no change of status needs no permission", signers{}, labelled, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := authentication.WithUser(context.Background(), authenticationv1.UserInfo{Username: "jane"})
			ctx = authorization.WithRequest(ctx, tt.allowed, authorization.Attributes{})
			err := PodCertificateRequests.Admit(ctx, nil, tt.obj, stored)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want 422 %q", err, tt.want)
			}
		})
	}
}

func TestKubectlShowsARequestsState(t *testing.T) {
	r := pcr(t, p256(t))
	r.Spec.UnverifiedUserAnnotations = map[string]string{"spiffe/path": "/x"}
	row := PodCertificateRequests.Row(r, time.Now())
	if want := []any{"web", "default", "node01", "example.com/spiffe", "Pending", "spiffe/path=/x"}; len(row) != len(want) {
		t.Fatalf("row %v, want %v", row, want)
	} else {
		for i := range want {
			if row[i] != want[i] {
				t.Errorf("cell %d = %v, want %v", i, row[i], want[i])
			}
		}
	}
	r.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeFailed, Status: metav1.ConditionTrue}}
	if got := PodCertificateRequests.Row(r, time.Now())[4]; got != "Failed" {
		t.Errorf("state %v, want Failed", got)
	}
}
