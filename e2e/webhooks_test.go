package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// Admission webhooks, driven with the real kubectl: the API server calls
// HTTPS servers the cluster's webhook configurations name, for the writes
// their rules match. The first test's webhooks run in the test itself
// (clientConfig.url); the second's is the agnhost webhook Kubernetes'
// conformance tests deploy, in a pod behind a Service, which the API
// server reaches through the pod's node.

// testWebhook is a webhook server in the test: /validate refuses a
// ConfigMap whose data has forbidden=yes, with a warning for any with
// warn=yes; /mutate adds the label mutated=yes. It records the reviews
// it was sent.
type testWebhook struct {
	*httptest.Server
	mu      sync.Mutex
	reviews []admissionv1.AdmissionRequest
}

func newTestWebhook(t *testing.T) *testWebhook {
	w := &testWebhook{}
	mux := http.NewServeMux()
	answer := func(judge func(req *admissionv1.AdmissionRequest, data map[string]string) admissionv1.AdmissionResponse) http.HandlerFunc {
		return func(rw http.ResponseWriter, r *http.Request) {
			var review admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
				http.Error(rw, "not an AdmissionReview", http.StatusBadRequest)
				return
			}
			w.mu.Lock()
			w.reviews = append(w.reviews, *review.Request)
			w.mu.Unlock()
			var cm struct{ Data map[string]string }
			json.Unmarshal(review.Request.Object.Raw, &cm)
			resp := judge(review.Request, cm.Data)
			resp.UID = review.Request.UID
			review.Request, review.Response = nil, &resp
			json.NewEncoder(rw).Encode(review)
		}
	}
	mux.Handle("/validate", answer(func(_ *admissionv1.AdmissionRequest, data map[string]string) admissionv1.AdmissionResponse {
		resp := admissionv1.AdmissionResponse{Allowed: data["forbidden"] != "yes"}
		if !resp.Allowed {
			resp.Result = &metav1.Status{Code: 403, Message: "forbidden=yes is not allowed here"}
		}
		if data["warn"] == "yes" {
			resp.Warnings = []string{"warn=yes is deprecated"}
		}
		return resp
	}))
	mux.Handle("/mutate", answer(func(*admissionv1.AdmissionRequest, map[string]string) admissionv1.AdmissionResponse {
		pt := admissionv1.PatchTypeJSONPatch
		return admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt,
			Patch: []byte(`[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`)}
	}))
	w.Server = httptest.NewTLSServer(mux)
	t.Cleanup(w.Close)
	return w
}

// caBundle is the base64 PEM of the server's certificate, which
// httptest signs itself.
func (w *testWebhook) caBundle() string {
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.Certificate().Raw})
	return base64.StdEncoding.EncodeToString(cert)
}

func (w *testWebhook) requests() []admissionv1.AdmissionRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]admissionv1.AdmissionRequest(nil), w.reviews...)
}

// webhookRule is a rules entry for CREATE and UPDATE of ConfigMaps.
const webhookRule = `
  rules:
  - operations: ["CREATE", "UPDATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  sideEffects: None
  admissionReviewVersions: ["v1"]`

func TestAdmissionWebhooks(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	k := newKubectl(t, c)
	hook := newTestWebhook(t)
	k.mustKubectl(t, "create", "namespace", "hooked")
	k.mustKubectl(t, "label", "namespace", "hooked", "webhooks=on")

	k.mustKubectl(t, "apply", "-f", k.manifest(t, "validating.yaml", fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: no-forbidden-data
webhooks:
- name: no-forbidden-data.example.com
  clientConfig:
    url: %s/validate
    caBundle: %s
  namespaceSelector:
    matchLabels:
      webhooks: "on"%s
`, hook.URL, hook.caBundle(), webhookRule)))

	t.Run("kubectl get shows the configuration with its webhook count", func(t *testing.T) {
		tab := parseTable(t, k.mustKubectl(t, "get", "validatingwebhookconfigurations"))
		if !sameStrings(tab.header, []string{"NAME", "WEBHOOKS", "AGE"}) {
			t.Fatalf("columns %v, want NAME WEBHOOKS AGE", tab.header)
		}
		if row := tab.row(t, "NAME", "no-forbidden-data"); row["WEBHOOKS"] != "1" {
			t.Fatalf("row %v, want 1 webhook", row)
		}
		// Kubernetes' defaults were filled in.
		got := k.mustKubectl(t, "get", "validatingwebhookconfiguration", "no-forbidden-data", "-o",
			"jsonpath={.webhooks[0].failurePolicy} {.webhooks[0].matchPolicy} {.webhooks[0].timeoutSeconds} {.webhooks[0].rules[0].scope}")
		if got != "Fail Equivalent 10 *" {
			t.Fatalf("defaults %q, want %q", got, "Fail Equivalent 10 *")
		}
	})

	t.Run("the validating webhook denies a ConfigMap in Kubernetes' words", func(t *testing.T) {
		// The configuration is in effect as soon as the API server's
		// watch has it: poll for the first refusal, then expect it.
		var errOut string
		testserver.EventuallyWithin(t, 5*time.Second, "the webhook refuses forbidden=yes", func() (bool, string) {
			var code int
			_, errOut, code = k.kubectl(t, "create", "configmap", "bad", "-n", "hooked", "--from-literal=forbidden=yes")
			if code == 0 {
				k.kubectl(t, "delete", "configmap", "bad", "-n", "hooked")
			}
			return code != 0, errOut
		})
		want := `error: failed to create configmap: admission webhook "no-forbidden-data.example.com" denied the request: forbidden=yes is not allowed here`
		if strings.TrimSpace(errOut) != want {
			t.Fatalf("kubectl said %q, want %q", strings.TrimSpace(errOut), want)
		}
		k.mustKubectl(t, "create", "configmap", "good", "-n", "hooked", "--from-literal=allowed=yes")
		// Outside the selected namespace the webhook is not asked.
		k.mustKubectl(t, "create", "configmap", "bad", "-n", "default", "--from-literal=forbidden=yes")
	})

	t.Run("the webhook is sent an AdmissionReview of the request", func(t *testing.T) {
		var seen *admissionv1.AdmissionRequest
		for _, r := range hook.requests() {
			if r.Name == "good" {
				seen = &r
			}
		}
		if seen == nil {
			t.Fatalf("no review of configmap good among %d", len(hook.requests()))
		}
		if seen.UID == "" || seen.Operation != admissionv1.Create || seen.Namespace != "hooked" ||
			seen.Kind != (metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}) ||
			seen.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}) ||
			seen.DryRun == nil || *seen.DryRun || seen.UserInfo.Username != "system:unsecured" {
			t.Fatalf("review %+v", seen)
		}
		var opts metav1.CreateOptions
		if err := json.Unmarshal(seen.Options.Raw, &opts); err != nil || opts.Kind != "CreateOptions" {
			t.Fatalf("options %s: %v", seen.Options.Raw, err)
		}
		for _, r := range hook.requests() {
			if r.Namespace == "default" {
				t.Fatalf("the webhook was asked about namespace default, which its namespaceSelector excludes: %+v", r)
			}
		}
	})

	t.Run("a webhook's warnings reach kubectl", func(t *testing.T) {
		_, errOut, code := k.kubectl(t, "create", "configmap", "warned", "-n", "hooked", "--from-literal=warn=yes")
		if code != 0 || !strings.Contains(errOut, "Warning: warn=yes is deprecated") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})

	t.Run("an update is judged too", func(t *testing.T) {
		errOut := k.mustFail(t, "patch", "configmap", "good", "-n", "hooked", "-p", `{"data":{"forbidden":"yes"}}`)
		if !strings.Contains(errOut, `admission webhook "no-forbidden-data.example.com" denied the request: forbidden=yes is not allowed here`) {
			t.Fatalf("kubectl patch said %q", errOut)
		}
	})

	t.Run("a mutating webhook adds a label", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "mutating.yaml", fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: add-label
webhooks:
- name: add-label.example.com
  clientConfig:
    url: %s/mutate
    caBundle: %s
  namespaceSelector:
    matchLabels:
      webhooks: "on"%s
`, hook.URL, hook.caBundle(), webhookRule)))
		testserver.EventuallyWithin(t, 5*time.Second, "a new ConfigMap is labelled mutated=yes", func() (bool, string) {
			name := fmt.Sprintf("m%d", time.Now().UnixNano())
			out := k.mustKubectl(t, "create", "configmap", name, "-n", "hooked", "-o", "jsonpath={.metadata.labels.mutated}")
			return out == "yes", "labels.mutated: " + out
		})
		if got := k.mustKubectl(t, "get", "mutatingwebhookconfiguration", "add-label", "-o", "jsonpath={.webhooks[0].reinvocationPolicy}"); got != "Never" {
			t.Fatalf("reinvocationPolicy %q, want the default Never", got)
		}
		k.mustKubectl(t, "delete", "mutatingwebhookconfiguration", "add-label")
	})

	t.Run("a webhook that cannot be called fails the request, unless its failurePolicy is Ignore", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		down := "https://" + l.Addr().String() + "/validate"
		l.Close() // nothing listens there now
		k.mustKubectl(t, "delete", "validatingwebhookconfiguration", "no-forbidden-data")
		apply := func(policy string) {
			k.mustKubectl(t, "apply", "-f", k.manifest(t, "down.yaml", fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: down
webhooks:
- name: down.example.com
  failurePolicy: %s
  clientConfig:
    url: %s
  namespaceSelector:
    matchLabels:
      webhooks: "on"%s
`, policy, down, webhookRule)))
		}
		apply("Fail")
		var errOut string
		testserver.EventuallyWithin(t, 5*time.Second, "the unreachable webhook fails the create", func() (bool, string) {
			var code int
			_, errOut, code = k.kubectl(t, "create", "configmap", "f", "-n", "hooked")
			if code == 0 {
				k.kubectl(t, "delete", "configmap", "f", "-n", "hooked")
			}
			return code != 0, errOut
		})
		want := fmt.Sprintf(`error: failed to create configmap: Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "%s?timeout=10s": dial tcp %s: connect: connection refused`,
			down, strings.TrimPrefix(strings.TrimSuffix(down, "/validate"), "https://"))
		if strings.TrimSpace(errOut) != want {
			t.Fatalf("kubectl said\n%q, want\n%q", strings.TrimSpace(errOut), want)
		}
		apply("Ignore")
		testserver.EventuallyWithin(t, 5*time.Second, "with failurePolicy Ignore the create succeeds", func() (bool, string) {
			out, errOut, code := k.kubectl(t, "create", "configmap", "i", "-n", "hooked")
			return code == 0, out + errOut
		})
	})

	t.Run("a bound ValidatingAdmissionPolicy refuses what its CEL rejects", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "policy.yaml", `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  variables:
  - name: replicas
    expression: object.spec.replicas
  validations:
  - expression: variables.replicas > 1
    messageExpression: "'wants replicas > 1, got ' + string(variables.replicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicas-binding
spec:
  policyName: replicas
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        webhooks: "on"
`))
		var errOut string
		testserver.EventuallyWithin(t, 5*time.Second, "the policy refuses a deployment of one replica", func() (bool, string) {
			var code int
			_, errOut, code = k.kubectl(t, "create", "deployment", "one", "-n", "hooked", "--image=nginx", "--replicas=1")
			if code == 0 {
				k.kubectl(t, "delete", "deployment", "one", "-n", "hooked")
			}
			return code != 0, errOut
		})
		if want := "ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: wants replicas > 1, got 1"; !strings.Contains(errOut, want) {
			t.Fatalf("kubectl said %q, want it to contain %q", errOut, want)
		}
		k.mustKubectl(t, "create", "deployment", "two", "-n", "hooked", "--image=nginx", "--replicas=2")
		k.mustKubectl(t, "create", "deployment", "one", "-n", "default", "--image=nginx", "--replicas=1") // not bound there
		tab := parseTable(t, k.mustKubectl(t, "get", "validatingadmissionpolicybindings"))
		if row := tab.row(t, "NAME", "replicas-binding"); row["POLICYNAME"] != "replicas" || row["PARAMREF"] != "<unset>" {
			t.Fatalf("row %v", row)
		}
	})

	t.Run("a bound MutatingAdmissionPolicy changes what it matches", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "mutating-policy.yaml", `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: annotate
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{annotations: {"mutated-by": "admission-policy"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: annotate-binding
spec:
  policyName: annotate
  matchResources:
    namespaceSelector:
      matchLabels:
        webhooks: "on"
`))
		testserver.EventuallyWithin(t, 5*time.Second, "a new deployment is annotated", func() (bool, string) {
			name := fmt.Sprintf("a%d", time.Now().UnixNano())
			out := k.mustKubectl(t, "create", "deployment", name, "-n", "hooked", "--image=nginx", "--replicas=2",
				"-o", "jsonpath={.metadata.annotations.mutated-by}")
			return out == "admission-policy", "annotation: " + out
		})
		k.mustKubectl(t, "delete", "mutatingadmissionpolicybinding", "annotate-binding")
	})

	t.Run("webhook configurations are validated in Kubernetes' words", func(t *testing.T) {
		errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "invalid.yaml", `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: invalid
webhooks:
- name: nodots
  timeoutSeconds: 31
  clientConfig:
    url: http://example.com/x
  matchConditions:
  - name: bad
    expression: "... [] bad expression"
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  admissionReviewVersions: ["v1"]
`))
		for _, want := range []string{
			`webhooks[0].name: Invalid value: "nodots": should be a domain with at least three segments separated by dots`,
			`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`,
			`webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds`,
			`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
			`webhooks[0].matchConditions[0].expression: Invalid value: "... [] bad expression": compilation failed`,
		} {
			if !strings.Contains(errOut, want) {
				t.Errorf("kubectl said %q\nwant it to contain %q", errOut, want)
			}
		}
	})
}

// TestAdmissionWebhookBehindAService runs agnhost's webhook, as the
// AdmissionWebhook conformance tests deploy it: a pod with its serving
// certificate from a Secret, a Service in front, and a configuration
// naming the Service. The API server reaches the pod through its node's
// kubelet (a port-forward), speaks TLS to it, and the pod refuses.
func TestAdmissionWebhookBehindAService(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	ca, cert, key := webhookCertificates(t, "e2e-test-webhook.default.svc")
	k.mustKubectl(t, "create", "secret", "generic", "webhook-certs", "--from-file=tls.crt="+k.manifest(t, "tls.crt", cert),
		"--from-file=tls.key="+k.manifest(t, "tls.key", key))
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "agnhost.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: sample-webhook
  labels:
    webhook: "true"
spec:
  containers:
  - name: sample-webhook
    image: registry.k8s.io/e2e-test-images/agnhost:2.66.1
    args: ["webhook", "--tls-cert-file=/certs/tls.crt", "--tls-private-key-file=/certs/tls.key", "-v=4", "--port=8444"]
    ports:
    - containerPort: 8444
    readinessProbe:
      httpGet:
        scheme: HTTPS
        port: 8444
        path: /readyz
      periodSeconds: 1
    volumeMounts:
    - name: certs
      mountPath: /certs
      readOnly: true
  volumes:
  - name: certs
    secret:
      secretName: webhook-certs
---
apiVersion: v1
kind: Service
metadata:
  name: e2e-test-webhook
spec:
  selector:
    webhook: "true"
  ports:
  - port: 8443
    targetPort: 8444
`))
	k.mustKubectl(t, "wait", "--for=condition=Ready", "pod/sample-webhook", "--timeout=60s")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "config.yaml", fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: deny-configmaps
webhooks:
- name: deny-unwanted-configmap-data.k8s.io
  clientConfig:
    service:
      namespace: default
      name: e2e-test-webhook
      path: /configmaps
      port: 8443
    caBundle: %s
  objectSelector:
    matchLabels:
      judged: "yes"
  rules:
  - operations: ["CREATE", "UPDATE", "DELETE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  sideEffects: None
  admissionReviewVersions: ["v1", "v1beta1"]
`, base64.StdEncoding.EncodeToString([]byte(ca)))))

	bad := k.manifest(t, "bad.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: disallowed
  labels:
    judged: "yes"
data:
  webhook-e2e-test: webhook-disallow
`)
	var errOut string
	testserver.EventuallyWithin(t, 30*time.Second, "agnhost's webhook refuses the ConfigMap", func() (bool, string) {
		var code int
		_, errOut, code = k.kubectl(t, "create", "-f", bad)
		if code == 0 {
			k.kubectl(t, "delete", "-f", bad)
		}
		return code != 0 && strings.Contains(errOut, "denied"), errOut
	})
	want := `admission webhook "deny-unwanted-configmap-data.k8s.io" denied the request: the configmap contains unwanted key and value`
	if !strings.Contains(errOut, want) {
		t.Fatalf("kubectl said %q, want %q", errOut, want)
	}
	k.mustKubectl(t, "create", "configmap", "fine", "--from-literal=webhook-e2e-test=webhook-allow")
}

// webhookCertificates makes a CA and a serving certificate it signs for
// dnsName, PEM-encoded, as the conformance tests' setupServerCert does.
func webhookCertificates(t *testing.T, dnsName string) (ca, cert, key string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})),
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}
