package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Kubernetes' bounds on a projected podCertificate's maxExpirationSeconds
// (pkg/apis/certificates): an hour at least; at most 91 days, or 24 hours
// for a kubernetes.io signer.
const (
	minPodCertificateSeconds           = 60 * 60
	maxPodCertificateSeconds           = 91 * 24 * 60 * 60
	maxKubernetesPodCertificateSeconds = 24 * 60 * 60
)

var podCertificateKeyTypes = []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}

// validateProjectedSources checks a projected volume's sources as
// Kubernetes' validateProjectionSources does for what mkube serves: one
// kind of source each, and a pod certificate's key type, lifetime and
// paths.
func validateProjectedSources(p *corev1.ProjectedVolumeSource, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, src := range p.Sources {
		srcPath := path.Child("sources").Index(i)
		n := 0
		for _, set := range []bool{src.Secret != nil, src.ConfigMap != nil, src.DownwardAPI != nil, src.ServiceAccountToken != nil,
			src.ClusterTrustBundle != nil, src.PodCertificate != nil} {
			if set {
				n++
			}
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(srcPath, "may not specify more than 1 volume type per source"))
		}
		if pc := src.PodCertificate; pc != nil {
			errs = append(errs, validatePodCertificate(pc, srcPath.Child("podCertificate"))...)
		}
	}
	return errs
}

func validatePodCertificate(pc *corev1.PodCertificateProjection, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !sets.New(podCertificateKeyTypes...).Has(pc.KeyType) {
		errs = append(errs, field.NotSupported(path.Child("keyType"), pc.KeyType, podCertificateKeyTypes))
	}
	if s := pc.MaxExpirationSeconds; s != nil {
		if *s < minPodCertificateSeconds {
			errs = append(errs, field.Invalid(path.Child("maxExpirationSeconds"), *s, fmt.Sprintf("if provided, maxExpirationSeconds must be >= %d", minPodCertificateSeconds)))
		}
		limit := maxPodCertificateSeconds
		if host, _, _ := strings.Cut(pc.SignerName, "/"); host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io") {
			limit = maxKubernetesPodCertificateSeconds
		}
		if int(*s) > limit {
			errs = append(errs, field.Invalid(path.Child("maxExpirationSeconds"), *s, fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", limit)))
		}
	}
	if pc.CredentialBundlePath == "" && pc.KeyPath == "" && pc.CertificateChainPath == "" {
		errs = append(errs, field.Required(path, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"))
	}
	return errs
}
