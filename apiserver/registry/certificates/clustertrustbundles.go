package certificates

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// ClusterTrustBundles publish CA certificates for in-cluster use: a pod
// mounts them with a clusterTrustBundle projected volume (by name, or by
// signerName and label selector) to trust the servers a signer issued
// for. A bundle of a signer is named after it ("example.com:db:<rest>"),
// so that listing a signer's bundles is a prefix. GA (v1) in Kubernetes
// v1.37.
var ClusterTrustBundles = &apiserver.Resource{
	GroupVersion: certificatesv1.SchemeGroupVersion, Name: "clustertrustbundles", Kind: "ClusterTrustBundle",
	New:     func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} },
	NewList: func() runtime.Object { return &certificatesv1.ClusterTrustBundleList{} },
	// The name's rule depends on spec.signerName (Validate checks it);
	// the generic check only keeps it a path segment.
	NameRule: path.ValidatePathSegmentName,
	Validate: func(obj, old runtime.Object) field.ErrorList {
		b := obj.(*certificatesv1.ClusterTrustBundle)
		if old == nil {
			return validateTrustBundle(b, true)
		}
		// ValidateClusterTrustBundleUpdate: an unchanged bundle is not
		// parsed again (Go's X.509 parser may have grown stricter since).
		prev := old.(*certificatesv1.ClusterTrustBundle)
		errs := validateTrustBundle(b, b.Spec.TrustBundle != prev.Spec.TrustBundle)
		return append(errs, apivalidation.ValidateImmutableField(b.Spec.SignerName, prev.Spec.SignerName, field.NewPath("spec", "signerName"))...)
	},
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"spec.signerName": obj.(*certificatesv1.ClusterTrustBundle).Spec.SignerName}
	},
	Columns: []apiserver.Column{{Name: "SignerName", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		b := obj.(*certificatesv1.ClusterTrustBundle)
		return []any{apiserver.OrNone(b.Spec.SignerName), apiserver.Age(b.CreationTimestamp, now)}
	},
}

// Kubernetes' bound on one bundle: 1 MiB.
const maxTrustBundleSize = 1 << 20

// validateTrustBundle is Kubernetes' ValidateClusterTrustBundle: the name
// carries the signer's ("example.com/db" → "example.com:db:" then a DNS
// subdomain), and the bundle is PEM CERTIFICATE blocks without headers,
// each an X.509 CA certificate, none twice, at least one.
func validateTrustBundle(b *certificatesv1.ClusterTrustBundle, parse bool) field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	if b.Spec.SignerName == "" {
		if strings.Contains(b.Name, ":") {
			errs = append(errs, field.Invalid(name, b.Name, `ClusterTrustBundle without signer name must not have ":" in its name`))
		} else {
			for _, msg := range apivalidation.NameIsDNSSubdomain(b.Name, false) {
				errs = append(errs, field.Invalid(name, b.Name, msg))
			}
		}
	} else {
		errs = append(errs, validateSignerName(field.NewPath("spec", "signerName"), b.Spec.SignerName)...)
		prefix := strings.ReplaceAll(b.Spec.SignerName, "/", ":") + ":"
		if rest, ok := strings.CutPrefix(b.Name, prefix); !ok {
			errs = append(errs, field.Invalid(name, b.Name,
				fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", b.Spec.SignerName, prefix)))
		} else {
			for _, msg := range apivalidation.NameIsDNSSubdomain(rest, false) {
				errs = append(errs, field.Invalid(name, b.Name, msg))
			}
		}
	}
	if parse {
		errs = append(errs, validatePEMBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	return errs
}

func validatePEMBundle(p *field.Path, bundle string) field.ErrorList {
	if len(bundle) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(p, "", maxTrustBundleSize)}
	}
	var errs field.ErrorList
	invalid := func(format string, args ...any) {
		errs = append(errs, field.Invalid(p, "<value omitted>", fmt.Sprintf(format, args...)))
	}
	seen := map[string][]int{}
	var order []string
	rest := []byte(bundle)
	for i := 0; ; i++ {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			invalid("entry %d has bad block type: %v", i, block.Type)
			continue
		}
		if len(block.Headers) != 0 {
			invalid("entry %d has PEM block headers", i)
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		switch {
		case err != nil:
			invalid("entry %d does not parse as X.509", i)
		case !cert.IsCA:
			invalid("entry %d does not have the CA bit set", i)
		case !cert.BasicConstraintsValid:
			invalid("entry %d has invalid basic constraints", i)
		default:
			key := string(block.Bytes)
			if seen[key] == nil {
				order = append(order, key)
			}
			seen[key] = append(seen[key], i)
		}
	}
	if len(errs) > 0 {
		return errs // a duplicate or a missing anchor would only repeat it
	}
	if len(order) == 0 {
		invalid("at least one trust anchor must be provided")
	}
	for _, key := range order {
		if indices := seen[key]; len(indices) > 1 {
			invalid("duplicate trust anchor (indices %v)", indices)
		}
	}
	return errs
}
