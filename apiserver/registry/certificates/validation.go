package certificates

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules below are Kubernetes' pkg/apis/certificates/validation, with
// its field paths and messages.

// options are Kubernetes' certificateValidationOptions: what a writer may
// do, and what old data is tolerated (a rule added after a request was
// stored does not make it unwritable).
type options struct {
	allowSettingApprovalConditions bool // the approval subresource
	allowSettingCertificate        bool // the status subresource
	allowBothApprovedAndDenied     bool
	allowDuplicateConditionTypes   bool
	allowEmptyConditionType        bool
	allowArbitraryCertificate      bool
	allowUnknownUsages             bool
	allowDuplicateUsages           bool
}

func optionsFor(r, prev *certificatesv1.CertificateSigningRequest) options {
	if prev == nil {
		return options{}
	}
	o := options{allowDuplicateUsages: len(sets.New(prev.Spec.Usages...)) != len(prev.Spec.Usages)}
	approved, denied, seen := false, false, map[certificatesv1.RequestConditionType]bool{}
	for _, c := range prev.Status.Conditions {
		approved = approved || c.Type == certificatesv1.CertificateApproved
		denied = denied || c.Type == certificatesv1.CertificateDenied
		o.allowEmptyConditionType = o.allowEmptyConditionType || c.Type == ""
		o.allowDuplicateConditionTypes = o.allowDuplicateConditionTypes || seen[c.Type]
		seen[c.Type] = true
	}
	o.allowBothApprovedAndDenied = approved && denied
	for _, u := range prev.Spec.Usages {
		o.allowUnknownUsages = o.allowUnknownUsages || !validUsages.Has(u)
	}
	o.allowArbitraryCertificate = bytes.Equal(r.Status.Certificate, prev.Status.Certificate) || checkCertificate(prev.Status.Certificate) != nil
	return o
}

var validUsages = sets.New(
	certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature, certificatesv1.UsageContentCommitment,
	certificatesv1.UsageKeyEncipherment, certificatesv1.UsageKeyAgreement, certificatesv1.UsageDataEncipherment,
	certificatesv1.UsageCertSign, certificatesv1.UsageCRLSign, certificatesv1.UsageEncipherOnly, certificatesv1.UsageDecipherOnly,
	certificatesv1.UsageAny, certificatesv1.UsageServerAuth, certificatesv1.UsageClientAuth, certificatesv1.UsageCodeSigning,
	certificatesv1.UsageEmailProtection, certificatesv1.UsageSMIME, certificatesv1.UsageIPsecEndSystem, certificatesv1.UsageIPsecTunnel,
	certificatesv1.UsageIPsecUser, certificatesv1.UsageTimestamping, certificatesv1.UsageOCSPSigning,
	certificatesv1.UsageMicrosoftSGC, certificatesv1.UsageNetscapeSGC,
)

// legacyUnknownSigner is v1beta1's default, refused in v1.
const legacyUnknownSigner = "kubernetes.io/legacy-unknown"

// minExpirationSeconds: Kubernetes refuses to sign for less than ten minutes.
const minExpirationSeconds = 600

// ParseRequest reads a PEM certificate request (Kubernetes' ParseCSR).
func ParseRequest(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

func validateRequest(r *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if req, err := ParseRequest(r.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), r.Spec.Request, err.Error()))
	} else if err := req.CheckSignature(); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), r.Spec.Request, err.Error()))
	}
	if len(r.Spec.Usages) == 0 {
		errs = append(errs, field.Required(spec.Child("usages"), ""))
	}
	seen := sets.New[certificatesv1.KeyUsage]()
	for i, u := range r.Spec.Usages {
		if !o.allowUnknownUsages && !validUsages.Has(u) {
			errs = append(errs, field.NotSupported(spec.Child("usages").Index(i), u, sets.List(validUsages)))
		}
		if !o.allowDuplicateUsages && seen.Has(u) {
			errs = append(errs, field.Duplicate(spec.Child("usages").Index(i), u))
		}
		seen.Insert(u)
	}
	if r.Spec.SignerName == legacyUnknownSigner {
		errs = append(errs, field.Invalid(spec.Child("signerName"), r.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, validateSignerName(spec.Child("signerName"), r.Spec.SignerName)...)
	}
	if s := r.Spec.ExpirationSeconds; s != nil && *s < minExpirationSeconds {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateConditions(field.NewPath("status", "conditions"), r, o)...)
	if !o.allowArbitraryCertificate {
		if err := checkCertificate(r.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

// validateSignerName is Kubernetes' ValidateSignerName: a DNS domain with
// at least one dot, a slash, and a path of DNS subdomains.
func validateSignerName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	domain, rest, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(rest, "/") {
		return field.ErrorList{field.Invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	if len(domain) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(p, "", validation.DNS1123SubdomainMaxLength))
	}
	labels := strings.Split(domain, ".")
	for _, l := range labels {
		if msgs := validation.IsDNS1123Label(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(p, domain, fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break // the other labels would only repeat it
		}
	}
	if len(labels) < 2 {
		errs = append(errs, field.Invalid(p, domain, "should be a domain with at least two segments separated by dots"))
	}
	maxPath := validation.DNS1123SubdomainMaxLength + validation.DNS1123LabelMaxLength + 1
	if len(rest) > maxPath {
		errs = append(errs, field.TooLong(p, "", maxPath))
	}
	for _, l := range strings.Split(rest, ".") {
		if msgs := validation.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(p, rest, fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	return errs
}

// Approved, Denied and Failed can only be True.
var trueOnly = sets.New(certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed)

// validateConditions: each condition has a type and a status, at most one
// of each type, and never both Approved and Denied.
func validateConditions(p *field.Path, r *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	approved, denied := false, false
	for i, c := range r.Status.Conditions {
		if !o.allowEmptyConditionType && c.Type == "" {
			errs = append(errs, field.Required(p.Index(i).Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		if trueOnly.Has(c.Type) {
			allowed = []string{string(corev1.ConditionTrue)}
		}
		if c.Status == "" {
			errs = append(errs, field.Required(p.Index(i).Child("status"), ""))
		} else if !sets.New(allowed...).Has(string(c.Status)) {
			errs = append(errs, field.NotSupported(p.Index(i).Child("status"), c.Status, allowed))
		}
		if !o.allowBothApprovedAndDenied {
			approved = approved || c.Type == certificatesv1.CertificateApproved
			denied = denied || c.Type == certificatesv1.CertificateDenied
			if trueOnly.Has(c.Type) && c.Type != certificatesv1.CertificateFailed && approved && denied {
				errs = append(errs, field.Invalid(p, c.Type, "Approved and Denied conditions are mutually exclusive"))
			}
		}
		if !o.allowDuplicateConditionTypes && seen[c.Type] {
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), c.Type))
		}
		seen[c.Type] = true
	}
	return errs
}

// checkCertificate: empty, or PEM CERTIFICATE blocks only, without
// headers, each holding certificates.
func checkCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		blocks++
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// validateUpdate is Kubernetes' validateCertificateSigningRequestUpdate:
// the request's own rules, then what the writer may change. No writer
// removes Approved, Denied or Failed; only approval adds or edits
// Approved and Denied; only status sets the certificate, once.
func validateUpdate(r, prev *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	errs := validateRequest(r, o)
	conditions := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(conditionsOf(r, t)) < len(conditionsOf(prev, t)) {
			errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !o.allowSettingApprovalConditions {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			was, is := conditionsOf(prev, t), conditionsOf(r, t)
			switch {
			case len(is) < len(was): // reported above
			case len(is) > len(was):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !equality.Semantic.DeepEqual(was, is):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not modify a condition of type %q", t)))
			}
		}
	}
	if !bytes.Equal(r.Status.Certificate, prev.Status.Certificate) {
		certificate := field.NewPath("status", "certificate")
		if !o.allowSettingCertificate {
			errs = append(errs, field.Forbidden(certificate, "updates may not set certificate content"))
		} else if len(prev.Status.Certificate) > 0 {
			errs = append(errs, field.Forbidden(certificate, "updates may not modify existing certificate content"))
		}
	}
	return errs
}

func conditionsOf(r *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range r.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}
