package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestPodCertificateProjections(t *testing.T) {
	cert := func(signer string, seconds *int32, keyType string) *corev1.ProjectedVolumeSource {
		return &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{
			SignerName: signer, KeyType: keyType, MaxExpirationSeconds: seconds, CredentialBundlePath: "credentialbundle.pem"}}}}
	}
	tests := []struct {
		name string
		p    *corev1.ProjectedVolumeSource
		want string // "" valid
	}{
		{"a day of a SPIFFE signer", cert("example.com/spiffe", ptr.To[int32](86400), "ED25519"), ""},
		{"less than an hour", cert("example.com/spiffe", ptr.To[int32](3599), "ED25519"),
			"v.projected.sources[0].podCertificate.maxExpirationSeconds: Invalid value: 3599: if provided, maxExpirationSeconds must be >= 3600"},
		{"more than 91 days", cert("example.com/spiffe", ptr.To[int32](91*24*3600+1), "ED25519"),
			"v.projected.sources[0].podCertificate.maxExpirationSeconds: Invalid value: 7862401: if provided, maxExpirationSeconds must be <= 7862400"},
		{"more than a day of a kubernetes.io signer", cert("kubernetes.io/kube-apiserver-client-pod", ptr.To[int32](86401), "ED25519"),
			"v.projected.sources[0].podCertificate.maxExpirationSeconds: Invalid value: 86401: if provided, maxExpirationSeconds must be <= 86400"},
		{"an unknown key type", cert("example.com/spiffe", nil, "DSA"),
			`v.projected.sources[0].podCertificate.keyType: Unsupported value: "DSA": supported values: "RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"`},
		{"two kinds in one source", &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
			ConfigMap: &corev1.ConfigMapProjection{}, Secret: &corev1.SecretProjection{}}}},
			"v.projected.sources[0]: Forbidden: may not specify more than 1 volume type per source"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range validateProjectedSources(tc.p, field.NewPath("v", "projected")) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
