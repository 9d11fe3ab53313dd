package certificates

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"net/mail"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules of a PodCertificateRequest are Kubernetes'
// ValidatePodCertificateRequestCreate, ...Update and ...StatusUpdate
// (pkg/apis/certificates/validation), with their paths and words.

// Kubernetes' bounds (pkg/apis/certificates/types.go): what a request may
// ask for, how big its parts may be.
const (
	minMaxExpirationSeconds           = 60 * 60           // an hour
	maxMaxExpirationSeconds           = 91 * 24 * 60 * 60 // 91 days, for a signer not of kubernetes.io
	kubernetesMaxMaxExpirationSeconds = 24 * 60 * 60      // a day, for the kubernetes.io signers
	maxStubPKCS10RequestSize          = 10 * 1024
	maxCertificateChainSize           = 100 * 1024
	maxUIDLength                      = 128
)

// A status may be issued only with notBefore near the API server's
// clock, and a refresh time well inside the certificate's life.
const (
	notBeforeSkew   = 5 * time.Minute
	refreshMargin   = 10 * time.Minute
	minLeafLifetime = time.Hour
)

var (
	pkcs10ReqPath    = field.NewPath("spec", "stubPKCS10Request")
	certChainPath    = field.NewPath("status", "certificateChain")
	notBeforePath    = field.NewPath("status", "notBefore")
	notAfterPath     = field.NewPath("status", "notAfter")
	beginRefreshPath = field.NewPath("status", "beginRefreshAt")
)

// isKubernetesSigner is Kubernetes' IsKubernetesSignerName: the
// kubernetes.io domain or one below it.
func isKubernetesSigner(signerName string) bool {
	host, _, _ := strings.Cut(signerName, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// validatePodCertificateRequestCreate is ValidatePodCertificateRequestCreate:
// who the request is for (pod, service account and node, each by name and
// uid), for how long at most, and the public key, as a stub PKCS#10
// request signed by the key (what the kubelet sends).
// The metadata is checked by the server for every kind.
func validatePodCertificateRequestCreate(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateSignerName(spec.Child("signerName"), r.Spec.SignerName)
	if r.Spec.UnverifiedUserAnnotations != nil {
		errs = append(errs, validateUserAnnotations(r.Spec.UnverifiedUserAnnotations, spec.Child("unverifiedUserAnnotations"))...)
	}
	names := []struct {
		field, value string
		rule         apivalidation.ValidateNameFunc
	}{
		{"podName", r.Spec.PodName, apivalidation.NameIsDNSSubdomain},
		{"serviceAccountName", r.Spec.ServiceAccountName, apivalidation.ValidateServiceAccountName},
		{"nodeName", string(r.Spec.NodeName), apivalidation.NameIsDNSSubdomain},
	}
	uids := []struct{ field, value string }{
		{"podUID", string(r.Spec.PodUID)}, {"serviceAccountUID", string(r.Spec.ServiceAccountUID)}, {"nodeUID", string(r.Spec.NodeUID)},
	}
	for i, n := range names {
		for _, msg := range n.rule(n.value, false) {
			errs = append(errs, field.Invalid(spec.Child(n.field), n.value, msg))
		}
		u := uids[i]
		if u.value == "" {
			errs = append(errs, field.Invalid(spec.Child(u.field), u.value, "must not be empty"))
		}
		if len(u.value) > maxUIDLength {
			errs = append(errs, field.TooLong(spec.Child(u.field), u.value, maxUIDLength))
		}
	}

	seconds := r.Spec.MaxExpirationSeconds
	if seconds == nil {
		return append(errs, field.Required(spec.Child("maxExpirationSeconds"), "must be set"))
	}
	limit := int32(maxMaxExpirationSeconds)
	if isKubernetesSigner(r.Spec.SignerName) {
		limit = kubernetesMaxMaxExpirationSeconds
	}
	if *seconds < minMaxExpirationSeconds || *seconds > limit {
		errs = append(errs, field.Invalid(spec.Child("maxExpirationSeconds"), *seconds,
			fmt.Sprintf("must be in the range [%d, %d]", minMaxExpirationSeconds, limit)))
	}

	// Kubernetes takes (stubPKCS10Request) or, in v1beta1 only, the
	// deprecated (pkixPublicKey, proofOfPossession): in v1 the stub is
	// required, with Kubernetes' words for the choice.
	if len(r.Spec.StubPKCS10Request) == 0 {
		return append(errs, field.Invalid(spec, field.OmitValueType{}, "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
	}
	return append(errs, validateStubPKCS10Request(r.Spec.StubPKCS10Request)...)
}

// validateUserAnnotations is Kubernetes' ValidateUserAnnotations: keys
// prefixed by a domain (in any case), and no more in all than an
// object's annotations may hold.
func validateUserAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		errs = append(errs, validation.IsDomainPrefixedKey(p, strings.ToLower(k))...)
	}
	if err := apivalidation.ValidateAnnotationsSize(annotations); err != nil {
		errs = append(errs, field.TooLong(p, "", apivalidation.TotalAnnotationSizeLimitB))
	}
	return errs
}

// validateStubPKCS10Request: a PKCS#10 request (DER) of a key of a type
// Kubernetes takes, signed by that key. Its contents are not checked:
// the kubelet sends an empty one, and the signers judge it.
func validateStubPKCS10Request(der []byte) field.ErrorList {
	if len(der) > maxStubPKCS10RequestSize {
		return field.ErrorList{field.TooLong(pkcs10ReqPath, der, maxStubPKCS10RequestSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if !supportedCurve(pub.Curve) {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if err := req.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

func supportedCurve(c elliptic.Curve) bool {
	return c == elliptic.P256() || c == elliptic.P384() || c == elliptic.P521()
}

// validatePodCertificateRequestUpdate is ...Update: the main resource
// changes metadata only; the spec is immutable, all of it.
func validatePodCertificateRequestUpdate(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
	return apivalidation.ValidateImmutableField(r.Spec, old.Spec, field.NewPath("spec"))
}

// The three terminal conditions; a request has at most one, True.
var terminalConditions = []string{
	certificatesv1.PodCertificateRequestConditionTypeIssued,
	certificatesv1.PodCertificateRequestConditionTypeDenied,
	certificatesv1.PodCertificateRequestConditionTypeFailed,
}

// validatePodCertificateRequestStatusUpdate is ...StatusUpdate, the
// signer's write. A status is written once: from pending to Issued (a
// chain whose leaf is the requested key's, with its times), Denied or
// Failed (conditions only); after that, and short of that, it may not
// change.
func validatePodCertificateRequestStatusUpdate(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	var errs field.ErrorList
	known := 0
	for i, c := range r.Status.Conditions {
		p := field.NewPath("status", "conditions").Index(i)
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			if known++; known > 1 {
				errs = append(errs, field.Invalid(p.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				errs = append(errs, field.NotSupported(p.Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), c.Type, terminalConditions))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(r.Status.Conditions, field.NewPath("status", "conditions"))...)
	if len(errs) > 0 {
		return errs // the conditions drive the rest
	}
	status := field.NewPath("status")
	switch {
	case terminal(old) != "":
		return sameStatus(r.Status, old.Status, status, "immutable after PodCertificateRequest is issued, denied, or failed")
	case terminal(r) == certificatesv1.PodCertificateRequestConditionTypeDenied || terminal(r) == certificatesv1.PodCertificateRequestConditionTypeFailed:
		return sameStatus(r.Status, certificatesv1.PodCertificateRequestStatus{Conditions: r.Status.Conditions}, status,
			"non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	case terminal(r) == certificatesv1.PodCertificateRequestConditionTypeIssued:
		return validateIssued(r, old, now)
	}
	return sameStatus(r.Status, old.Status, status, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

// terminal is the request's True terminal condition, or "".
func terminal(r *certificatesv1.PodCertificateRequest) string {
	for _, c := range r.Status.Conditions {
		for _, t := range terminalConditions {
			if c.Type == t && c.Status == metav1.ConditionTrue {
				return t
			}
		}
	}
	return ""
}

func sameStatus(a, b certificatesv1.PodCertificateRequestStatus, p *field.Path, detail string) field.ErrorList {
	if equality.Semantic.DeepEqual(a, b) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, field.OmitValueType{}, detail)}
}

// validateIssued checks an issuance: PEM certificates only, the first
// (the leaf) for the requested key, with sane names; notBefore and
// notAfter as in the leaf, notBefore within 5 minutes of now; a life of
// an hour to maxExpirationSeconds; beginRefreshAt at least 10 minutes
// inside it. A leaf of 10:00 to 11:00 may refresh from 10:10 to 10:50.
func validateIssued(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	chain := r.Status.CertificateChain
	if len(chain) > maxCertificateChainSize {
		return field.ErrorList{field.TooLong(certChainPath, chain, maxCertificateChainSize)}
	}
	leafBlock, rest := pem.Decode([]byte(chain))
	if leafBlock == nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must contain at least one certificate")}
	}
	if leafBlock.Type != "CERTIFICATE" {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "leaf certificate does not parse as valid X.509")}
	}
	var errs field.ErrorList
	for _, name := range leaf.DNSNames {
		if name == "" {
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(name, "..") {
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, email := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(email); err != nil {
			errs = append(errs, field.Invalid(certChainPath, email, "leaf certificate should not contain invalid EmailAddress"))
		}
	}

	want, errList := requestedKey(old)
	if errList != nil {
		return append(errs, errList...)
	}
	if k, ok := want.(interface{ Equal(crypto.PublicKey) bool }); !ok || !k.Equal(leaf.PublicKey) {
		return append(errs, field.Invalid(certChainPath, chain, "leaf certificate was not issued to the requested public key"))
	}

	st := r.Status
	if st.NotBefore == nil {
		errs = append(errs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		errs = append(errs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(errs) > 0 {
		return errs
	}
	notBefore, notAfter, refresh := st.NotBefore.Time, st.NotAfter.Time, st.BeginRefreshAt.Time
	switch lifetime := leaf.NotAfter.Sub(leaf.NotBefore); {
	case !notBefore.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(notBeforePath, notBefore, "must be set to the NotBefore time encoded in the leaf certificate")}
	case !(notBefore.After(now.Add(-notBeforeSkew)) && notBefore.Before(now.Add(notBeforeSkew))):
		return field.ErrorList{field.Invalid(notBeforePath, notBefore, "must be set to within 5 minutes of kube-apiserver's current time")}
	case !notAfter.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(notAfterPath, notAfter, "must be set to the NotAfter time encoded in the leaf certificate")}
	case lifetime < minLeafLifetime:
		return field.ErrorList{field.Invalid(certChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")}
	case lifetime > time.Duration(*r.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(certChainPath, lifetime,
			fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *r.Spec.MaxExpirationSeconds))}
	case refresh.Before(notBefore.Add(refreshMargin)):
		return field.ErrorList{field.Invalid(beginRefreshPath, refresh, "must be at least 10 minutes after status.notBefore")}
	case refresh.After(notAfter.Add(-refreshMargin)):
		return field.ErrorList{field.Invalid(beginRefreshPath, refresh, "must be at least 10 minutes before status.notAfter")}
	}

	// The rest of the chain: certificates, each parsed. The chain is not
	// verified (the signer's roots are its own business).
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if b.Type != "CERTIFICATE" {
			// Kubernetes' spelling.
			return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(certChainPath, chain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}

// requestedKey is the public key the request asked a certificate for:
// the stub request's.
func requestedKey(r *certificatesv1.PodCertificateRequest) (crypto.PublicKey, field.ErrorList) {
	req, err := x509.ParseCertificateRequest(r.Spec.StubPKCS10Request)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	return req.PublicKey, nil
}
