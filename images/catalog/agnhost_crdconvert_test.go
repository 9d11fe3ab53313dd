package catalog

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/images/shell"
)

// convertOverTLS sends the conversion webhook one ConversionReview of
// apiVersion over TLS and returns its answer.
func convertOverTLS(t *testing.T, p *shell.Process, apiVersion string, req *apiextensionsv1.ConversionRequest) *apiextensionsv1.ConversionReview {
	t.Helper()
	argv := []string{"/agnhost", "crd-conversion-webhook", "--tls-cert-file=/certs/tls.crt", "--tls-private-key-file=/certs/tls.key", "-v=4", "--port=9444"}
	var out apiextensionsv1.ConversionReview
	err := postOverTLS(t, p, argv, 9444, "https://e2e-test-crd-conversion-webhook.ns.svc:9443/crdconvert",
		apiextensionsv1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: "ConversionReview"}, Request: req}, &out)
	if err != nil || out.Response == nil {
		t.Fatalf("%v %+v", err, out)
	}
	return &out
}

func TestAgnhostConversionWebhookConvertsAsTheConformanceTestsExpect(t *testing.T) {
	cert, key := selfSigned(t)
	fs := shell.NewFS()
	fs.WriteFile("/certs/tls.crt", cert)
	fs.WriteFile("/certs/tls.key", key)
	p := shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: fs, Hostname: "sample-crd-conversion-webhook"})
	obj := func(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }
	tests := []struct {
		name, review, to string
		objects          []runtime.RawExtension
		want             []string // the converted objects, JSON
		failure          string
	}{
		{"v1 to v2 splits hostPort", "apiextensions.k8s.io/v1", "stable.example.com/v2",
			[]runtime.RawExtension{obj(`{"apiVersion":"stable.example.com/v1","kind":"E2e","metadata":{"name":"a"},"hostPort":"localhost:8080"}`)},
			[]string{`{"apiVersion":"stable.example.com/v2","host":"localhost","kind":"E2e","metadata":{"name":"a"},"port":"8080"}`}, ""},
		{"v2 to v1 joins them, in a v1beta1 review", "apiextensions.k8s.io/v1beta1", "stable.example.com/v1",
			[]runtime.RawExtension{obj(`{"apiVersion":"stable.example.com/v2","kind":"E2e","metadata":{"name":"a"},"host":"h"}`),
				obj(`{"apiVersion":"stable.example.com/v2","kind":"E2e","metadata":{"name":"b"}}`)},
			[]string{`{"apiVersion":"stable.example.com/v1","hostPort":"h:","kind":"E2e","metadata":{"name":"a"}}`,
				`{"apiVersion":"stable.example.com/v1","kind":"E2e","metadata":{"name":"b"}}`}, ""},
		{"a version to itself is refused", "apiextensions.k8s.io/v1", "stable.example.com/v1",
			[]runtime.RawExtension{obj(`{"apiVersion":"stable.example.com/v1","kind":"E2e","metadata":{"name":"a"}}`)}, nil,
			"conversion from a version to itself should not call the webhook: stable.example.com/v1"},
		{"a bad hostPort is refused", "apiextensions.k8s.io/v1", "stable.example.com/v2",
			[]runtime.RawExtension{obj(`{"apiVersion":"stable.example.com/v1","kind":"E2e","metadata":{"name":"a"},"hostPort":"nocolon"}`)}, nil,
			"invalid hostPort value `nocolon`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := convertOverTLS(t, p, tc.review, &apiextensionsv1.ConversionRequest{UID: "uid-1", DesiredAPIVersion: tc.to, Objects: tc.objects})
			if out.APIVersion != tc.review || out.Response.UID != "uid-1" {
				t.Fatalf("answered %s, uid %q", out.APIVersion, out.Response.UID)
			}
			if tc.failure != "" {
				if out.Response.Result.Status != metav1.StatusFailure || out.Response.Result.Message != tc.failure {
					t.Fatalf("result %+v, want failure %q", out.Response.Result, tc.failure)
				}
				return
			}
			if out.Response.Result.Status != metav1.StatusSuccess || len(out.Response.ConvertedObjects) != len(tc.want) {
				t.Fatalf("result %+v, %d objects", out.Response.Result, len(out.Response.ConvertedObjects))
			}
			for i, want := range tc.want {
				if got := string(out.Response.ConvertedObjects[i].Raw); got != want {
					t.Errorf("object %d:\n got %s\nwant %s", i, got, want)
				}
			}
		})
	}
}
