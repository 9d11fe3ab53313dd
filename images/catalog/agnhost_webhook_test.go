package catalog

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/images/shell"
)

var webhookArgv = []string{"/agnhost", "webhook", "--tls-cert-file=/certs/tls.crt", "--tls-private-key-file=/certs/tls.key", "-v=4", "--port=8444"}

func TestAgnhostWebhookDiesWithoutItsCertificate(t *testing.T) {
	c := start(t, "registry.k8s.io/e2e-test-images/agnhost:2.66.1", webhookArgv, nil, 0)
	select {
	case r := <-c.done:
		if r.code != 255 || !strings.Contains(c.stderr.String(), "open /certs/tls.crt: no such file or directory") {
			t.Fatalf("exit %d, stderr %q", r.code, c.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agnhost webhook did not exit")
	}
}

// selfSigned is a certificate and key, PEM.
func selfSigned(t *testing.T) (cert, key []byte) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e-test-webhook.ns.svc"},
		NotBefore: epoch.Add(-time.Hour), NotAfter: epoch.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(k)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// postOverTLS runs agnhost with argv on one connection of port and
// POSTs it body, JSON, over TLS; out receives its JSON answer.
func postOverTLS(t *testing.T, p *shell.Process, argv []string, port int32, url string, body, out any) error {
	t.Helper()
	node, pod := net.Pipe()
	go Lookup("registry.k8s.io/e2e-test-images/agnhost:2.66.1").Serve(Running{Process: p, Argv: argv, Started: epoch}, port, pod)
	conn := tls.Client(node, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a test of the server
	defer conn.Close()
	data, _ := json.Marshal(body)
	hr, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	hr.Header.Set("Content-Type", "application/json")
	if err := hr.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// review sends the webhook at path one AdmissionReview over TLS and
// returns its answer.
func review(t *testing.T, p *shell.Process, path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	req.UID = "uid-1"
	var out admissionv1.AdmissionReview
	err := postOverTLS(t, p, webhookArgv, 8444, "https://e2e-test-webhook.ns.svc:8443"+path,
		admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req}, &out)
	if err != nil || out.Response == nil {
		t.Fatalf("%s: %v %+v", path, err, out)
	}
	if out.Response.UID != "uid-1" || out.APIVersion != "admission.k8s.io/v1" {
		t.Fatalf("%s: answered %+v", path, out)
	}
	return out.Response
}

func raw(obj string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(obj)} }

func TestAgnhostWebhookJudgesAsTheConformanceTestsExpect(t *testing.T) {
	cert, key := selfSigned(t)
	fs := shell.NewFS()
	fs.WriteFile("/certs/tls.crt", cert)
	fs.WriteFile("/certs/tls.key", key)
	p := shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: fs, Hostname: "sample-webhook"})
	configmaps := metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	pods := metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
	tests := []struct {
		name    string
		path    string
		req     admissionv1.AdmissionRequest
		allowed bool
		message string // the Status's message or reason
		patch   string
	}{
		{"always-deny denies", "/always-deny", admissionv1.AdmissionRequest{Resource: configmaps, Object: raw(`{}`)}, false,
			"this webhook denies all requests", ""},
		{"a disallowed ConfigMap is refused with a reason", "/configmaps", admissionv1.AdmissionRequest{Resource: configmaps, Operation: admissionv1.Create,
			Object: raw(`{"data":{"webhook-e2e-test":"webhook-disallow"}}`)}, false, "the configmap contains unwanted key and value", ""},
		{"deleting a nondeletable ConfigMap is refused", "/configmaps", admissionv1.AdmissionRequest{Resource: configmaps, Operation: admissionv1.Delete,
			OldObject: raw(`{"data":{"webhook-e2e-test":"webhook-nondeletable"}}`)}, false,
			"the configmap cannot be deleted because it contains unwanted key and value", ""},
		{"an unwanted pod is refused for both reasons", "/pods", admissionv1.AdmissionRequest{Resource: pods, Operation: admissionv1.Create,
			Object: raw(`{"metadata":{"labels":{"webhook-e2e-test":"webhook-disallow"}},"spec":{"containers":[{"name":"webhook-disallow"}]}}`)}, false,
			"the pod contains unwanted label; the pod contains unwanted container name;", ""},
		{"the first mutation stage", "/mutating-configmaps", admissionv1.AdmissionRequest{Resource: configmaps, Object: raw(`{"data":{"mutation-start":"yes"}}`)},
			true, "", `/data/mutation-stage-1`},
		{"the second stage after the first", "/mutating-configmaps", admissionv1.AdmissionRequest{Resource: configmaps,
			Object: raw(`{"data":{"mutation-start":"yes","mutation-stage-1":"yes"}}`)}, true, "", `/data/mutation-stage-2`},
		{"the pod to be mutated gets an init container", "/mutating-pods", admissionv1.AdmissionRequest{Resource: pods,
			Object: raw(`{"metadata":{"name":"webhook-to-be-mutated"},"spec":{"containers":[{"name":"example"}]}}`)}, true, "", `webhook-added-init-container`},
		{"attaching to the pod is refused", "/pods/attach", admissionv1.AdmissionRequest{Resource: pods, SubResource: "attach", Name: "to-be-attached-pod",
			Object: raw(`{"kind":"PodAttachOptions","apiVersion":"v1","stdin":true,"container":"container1"}`)}, false,
			"attaching to pod 'to-be-attached-pod' is not allowed", ""},
		{"add-label creates the labels", "/add-label", admissionv1.AdmissionRequest{Object: raw(`{"metadata":{"name":"x"}}`)}, true, "",
			`"value": {"added-label": "yes"}`},
		{"a CRD with the unwanted label is refused", "/crd", admissionv1.AdmissionRequest{
			Resource: metav1.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
			Object:   raw(`{"metadata":{"labels":{"webhook-e2e-test":"webhook-disallow"}}}`)}, false, "the crd contains unwanted label", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := review(t, p, tc.path, &tc.req)
			var msg string
			if resp.Result != nil {
				msg = resp.Result.Message + string(resp.Result.Reason)
			}
			if resp.Allowed != tc.allowed || msg != tc.message || !strings.Contains(string(resp.Patch), tc.patch) {
				t.Fatalf("allowed %v, message %q, patch %s", resp.Allowed, msg, resp.Patch)
			}
		})
	}
}
