package clustertrustbundle

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// fakeBundles is a ClusterTrustBundle cache of the given bundles.
type fakeBundles []*certificatesv1.ClusterTrustBundle

func (f fakeBundles) Get(name string) (runtime.Object, bool) {
	for _, b := range f {
		if b.Name == name {
			return b, true
		}
	}
	return nil, false
}

func (f fakeBundles) List() []runtime.Object {
	out := make([]runtime.Object, len(f))
	for i, b := range f {
		out[i] = b
	}
	return out
}

// caPEM is a self-signed CA certificate named cn, in PEM.
func caPEM(t *testing.T, cn string) string {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// commonNames are the subjects of the PEM certificates, in order.
func commonNames(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return out
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c.Subject.CommonName)
	}
}

func TestAClusterTrustBundleSourceIsTheAnchorsItSelects(t *testing.T) {
	root1, root2, root3, other := caPEM(t, "root1"), caPEM(t, "root2"), caPEM(t, "root3"), caPEM(t, "other")
	bundle := func(name, signer, pems string, labels map[string]string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pems}}
	}
	alive := map[string]string{"signer.alive": "true"}
	tb := &Manager{bundles: fakeBundles{
		bundle("roots", "", "a comment\n"+root1+"more text\n"+root2, nil),
		bundle("example.com:db:a", "example.com/db", root1+root3, alive),
		bundle("example.com:db:b", "example.com/db", root2+root1, alive),
		bundle("example.com:db:c", "example.com/db", root3, map[string]string{"signer.alive": "false"}),
		bundle("example.com:web:a", "example.com/web", other, alive),
	}}
	bySigner := func(signer string, sel *metav1.LabelSelector, optional bool) *corev1.ClusterTrustBundleProjection {
		return &corev1.ClusterTrustBundleProjection{SignerName: &signer, LabelSelector: sel, Optional: &optional, Path: "ca.pem"}
	}
	tests := []struct {
		name  string
		src   *corev1.ClusterTrustBundleProjection
		want  []string // the anchors' names; nil: an empty file
		error string
	}{
		{"a bundle by name is its anchors, the text between them dropped", &corev1.ClusterTrustBundleProjection{Name: ptr.To("roots")},
			[]string{"root1", "root2"}, ""},
		{"a missing bundle refuses the volume", &corev1.ClusterTrustBundleProjection{Name: ptr.To("nope")}, nil,
			`while getting ClusterTrustBundle: clustertrustbundle.certificates.k8s.io "nope" not found`},
		{"unless the source is optional: an empty file", &corev1.ClusterTrustBundleProjection{Name: ptr.To("nope"), Optional: ptr.To(true)}, nil, ""},
		{"a signer's bundles whose labels match, each anchor once", bySigner("example.com/db", &metav1.LabelSelector{MatchLabels: alive}, false),
			[]string{"root1", "root2", "root3"}, ""},
		{"an empty selector matches all the signer's bundles", bySigner("example.com/db", &metav1.LabelSelector{}, false),
			[]string{"root1", "root2", "root3"}, ""},
		{"and never another signer's", bySigner("example.com/web", &metav1.LabelSelector{}, false), []string{"other"}, ""},
		{"no selector matches nothing", bySigner("example.com/db", nil, false), nil,
			"combination of signerName and labelSelector matched zero ClusterTrustBundles"},
		{"which an optional source takes as an empty file", bySigner("example.com/db", nil, true), nil, ""},
		{"a selector matching no bundle", bySigner("example.com/db", &metav1.LabelSelector{MatchLabels: map[string]string{"signer.alive": "unknown"}}, false),
			nil, "combination of signerName and labelSelector matched zero ClusterTrustBundles"},
		{"a source naming neither", &corev1.ClusterTrustBundleProjection{Path: "ca.pem"}, nil,
			"ClusterTrustBundle projection requires either name or signerName to be set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := tb.Anchors(tc.src)
			if (err == nil) != (tc.error == "") || err != nil && err.Error() != tc.error {
				t.Fatalf("error %v, want %q", err, tc.error)
			}
			if err != nil {
				return
			}
			if data == nil {
				t.Fatal("no content: an optional source is an empty file, not none")
			}
			got := commonNames(t, data)
			// Sorted by DER, which is not by name: compare as sets, then
			// check the order is the DER one.
			if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, tc.want) {
				t.Errorf("anchors %v, want %v", got, tc.want)
			}
			if strings.Count(string(data), "BEGIN CERTIFICATE") != len(tc.want) || strings.Contains(string(data), "text") {
				t.Errorf("not normalized:\n%s", data)
			}
		})
	}
}

func TestNormalizedAnchorsDoNotDependOnTheBundlesOrder(t *testing.T) {
	a, b := caPEM(t, "a"), caPEM(t, "b")
	one := normalizeAnchors([]*certificatesv1.ClusterTrustBundle{{Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: a + b}}})
	two := normalizeAnchors([]*certificatesv1.ClusterTrustBundle{{Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: b}},
		{Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: a + b}}})
	if string(one) != string(two) {
		t.Errorf("the same anchors gave two files:\n%s\n%s", one, two)
	}
}
