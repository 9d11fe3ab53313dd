package catalog

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// `agnhost webhook` (test/images/agnhost/webhook) is the admission
// webhook Kubernetes' AdmissionWebhook conformance tests deploy: an
// HTTPS server, on --port (443), with the certificate and key of
// --tls-cert-file and --tls-private-key-file (a Secret the test mounts),
// whose paths each judge or patch an AdmissionReview (v1 or v1beta1) as
// the test expects:
//
//	/always-deny                 refuses: "this webhook denies all requests"
//	/always-allow-delay-5s       admits after 5 s (the timeout test)
//	/add-label                   adds the label added-label=yes
//	/pods                        refuses a pod labelled webhook-e2e-test=webhook-disallow or with a
//	                             container named so; hangs on webhook-e2e-test=wait-forever
//	/pods/attach                 refuses `kubectl attach -i -c container1 to-be-attached-pod`
//	/mutating-pods               adds an init container to the pod webhook-to-be-mutated
//	/mutating-pods-sidecar       adds a container of --sidecar-image
//	/configmaps                  refuses data webhook-e2e-test: webhook-disallow (and deleting webhook-nondeletable)
//	/mutating-configmaps         mutation-start → mutation-stage-1 → mutation-stage-2
//	/custom-resource             as /configmaps, for custom resources
//	/mutating-custom-resource    as /mutating-configmaps, for custom resources
//	/crd                         refuses a CRD labelled webhook-e2e-test: webhook-disallow
//	/readyz                      "ok", for the readiness probe
//
// The answers are the real one's, patches and messages word for word.
// The certificate is read from the container's files when a connection
// comes, as the real server loaded it at start.

// webhookStart is what the real binary does before it serves: load the
// key pair, or die of it (klog.Fatal exits 255).
func webhookStart(p *shell.Process, flags []string) (port int32, exit int, ok bool) {
	if _, err := webhookCertificate(p.FS, flags); err != nil {
		fmt.Fprintf(p.Stderr, "F%s %7d config.go:36] %v\n", p.Clock.Now().UTC().Format("0102 15:04:05.000000"), 1, err)
		return 0, 255, false
	}
	return int32(lib.IntFlag(flags, "port", 443)), 0, true
}

// webhookCertificate is the key pair of --tls-cert-file and
// --tls-private-key-file, from the container's files.
func webhookCertificate(fs *shell.FS, flags []string) (tls.Certificate, error) {
	return lib.LoadKeyPair(fs, lib.StringFlag(flags, "tls-cert-file", ""), lib.StringFlag(flags, "tls-private-key-file", ""))
}

// serveWebhook answers one connection: TLS with the mounted key pair,
// then the webhook's HTTP server.
func serveWebhook(c Running, conn net.Conn, flags []string) {
	cert, err := webhookCertificate(c.Process.FS, flags)
	if err != nil {
		conn.Close()
		return
	}
	tlsConn := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{cert}})
	lib.ServeHTTP(tlsConn, webhookMux(c, lib.StringFlag(flags, "sidecar-image", "")))
}

// admitFunc judges one request, as agnhost's admitv1Func.
type admitFunc func(r *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse

func webhookMux(c Running, sidecarImage string) http.Handler {
	mux := http.NewServeMux()
	handle := func(path string, f admitFunc) { mux.Handle(path, webhookHandler(c, f)) }
	handle("/always-allow-delay-5s", func(r *http.Request, _ *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		select {
		case <-c.Process.Clock.After(5 * time.Second):
		case <-r.Context().Done():
		}
		return &admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Message: "this webhook allows all requests"}}
	})
	handle("/always-deny", func(*http.Request, *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "this webhook denies all requests"}}
	})
	handle("/add-label", addLabel)
	handle("/pods", admitPods)
	handle("/pods/attach", denySpecificAttachment)
	handle("/mutating-pods", func(_ *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		return patchPod(ar, func(pod *corev1.Pod) bool {
			return pod.Name == "webhook-to-be-mutated" && !hasContainer(pod.Spec.InitContainers, "webhook-added-init-container")
		}, `[{"op":"add","path":"/spec/initContainers","value":[{"image":"webhook-added-image","name":"webhook-added-init-container","resources":{}}]}]`)
	})
	handle("/mutating-pods-sidecar", func(_ *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		if sidecarImage == "" {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Status: "Failure", Message: "No image specified by the sidecar-image parameter", Code: 500}}
		}
		return patchPod(ar, func(pod *corev1.Pod) bool { return !hasContainer(pod.Spec.Containers, "webhook-added-sidecar") },
			fmt.Sprintf(`[{"op":"add", "path":"/spec/containers/-","value":{"image":"%v","name":"webhook-added-sidecar","resources":{}}}]`, sidecarImage))
	})
	handle("/configmaps", func(_ *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		return admitData(ar, "configmap", metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	})
	handle("/mutating-configmaps", func(_ *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		return mutateData(ar, &metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	})
	handle("/custom-resource", func(_ *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		return admitData(ar, "custom resource", metav1.GroupVersionResource{})
	})
	handle("/mutating-custom-resource", func(_ *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		return mutateData(ar, nil)
	})
	handle("/crd", admitCRD)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	return mux
}

// webhookHandler decodes the review, answers it in its own version with
// the request's uid, as agnhost's serve does; a request that is not JSON
// gets nothing, a handler with no answer drops the connection (the real
// one panics on it).
func webhookHandler(c Running, admit admitFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			klogError(c, fmt.Sprintf("contentType=%s, expect application/json", ct))
			return
		}
		var ar admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &ar); err != nil || ar.Request == nil {
			msg := fmt.Sprintf("Request could not be decoded: %v", err)
			klogError(c, msg)
			http.Error(w, msg, http.StatusBadRequest)
			return
		}
		if ar.Kind != "AdmissionReview" || (ar.APIVersion != "admission.k8s.io/v1" && ar.APIVersion != "admission.k8s.io/v1beta1") {
			msg := fmt.Sprintf("Unsupported group version kind: %s, Kind=%s", ar.APIVersion, ar.Kind)
			http.Error(w, msg, http.StatusBadRequest)
			return
		}
		resp := admit(r, &ar)
		if resp == nil {
			panic(http.ErrAbortHandler)
		}
		resp.UID = ar.Request.UID
		out := admissionv1.AdmissionReview{TypeMeta: ar.TypeMeta, Response: resp}
		data, err := json.Marshal(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	})
}

// klogError is an error line of klog, as the real server writes them.
func klogError(c Running, msg string) {
	fmt.Fprintf(c.Process.Stderr, "E%s %7d main.go:103] %s\n", c.Process.Clock.Now().UTC().Format("0102 15:04:05.000000"), 1, msg)
}

func errorResponse(err error) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: err.Error()}}
}

func jsonPatch(patch string) *admissionv1.AdmissionResponse {
	pt := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt}
}

// addLabel adds {"added-label": "yes"}, creating the labels if need be.
func addLabel(_ *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	var obj struct {
		metav1.ObjectMeta `json:"metadata,omitempty"`
	}
	if err := json.Unmarshal(ar.Request.Object.Raw, &obj); err != nil {
		return errorResponse(err)
	}
	value, has := obj.Labels["added-label"]
	switch {
	case len(obj.Labels) == 0:
		return jsonPatch(`[{ "op": "add", "path": "/metadata/labels", "value": {"added-label": "yes"}}]`)
	case !has:
		return jsonPatch(`[{ "op": "add", "path": "/metadata/labels/added-label", "value": "yes" }]`)
	case value != "yes":
		return jsonPatch(`[{ "op": "replace", "path": "/metadata/labels/added-label", "value": "yes" }]`)
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

var podResource = metav1.GroupVersionResource{Version: "v1", Resource: "pods"}

// admitPods refuses unwanted labels and container names, and never
// answers a pod labelled wait-forever (until the API server gives up).
func admitPods(r *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	if ar.Request.Resource != podResource {
		return errorResponse(fmt.Errorf("expect resource to be %s", podResource))
	}
	var pod corev1.Pod
	if err := json.Unmarshal(ar.Request.Object.Raw, &pod); err != nil {
		return errorResponse(err)
	}
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	var msg string
	switch pod.Labels["webhook-e2e-test"] {
	case "webhook-disallow":
		resp.Allowed = false
		msg += "the pod contains unwanted label; "
	case "wait-forever":
		<-r.Context().Done() // the real one sleeps forever; the caller's timeout closes the connection
		return nil
	}
	for _, c := range pod.Spec.Containers {
		if strings.Contains(c.Name, "webhook-disallow") {
			resp.Allowed = false
			msg += "the pod contains unwanted container name; "
		}
	}
	if !resp.Allowed {
		resp.Result = &metav1.Status{Message: strings.TrimSpace(msg)}
	}
	return resp
}

func hasContainer(cs []corev1.Container, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

func patchPod(ar *admissionv1.AdmissionReview, should func(*corev1.Pod) bool, patch string) *admissionv1.AdmissionResponse {
	if ar.Request.Resource != podResource {
		return nil
	}
	var pod corev1.Pod
	if err := json.Unmarshal(ar.Request.Object.Raw, &pod); err != nil {
		return errorResponse(err)
	}
	if should(&pod) {
		return jsonPatch(patch)
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// denySpecificAttachment refuses `kubectl attach to-be-attached-pod -i -c container1`.
func denySpecificAttachment(_ *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	req := ar.Request
	if req.Name != "to-be-attached-pod" {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	if req.Resource != podResource {
		return errorResponse(fmt.Errorf("expect resource to be %s, got %s", podResource, req.Resource))
	}
	if req.SubResource != "attach" {
		return errorResponse(fmt.Errorf("expect subresource to be %s, got %s", "attach", req.SubResource))
	}
	var opts corev1.PodAttachOptions
	if err := json.Unmarshal(req.Object.Raw, &opts); err != nil {
		return errorResponse(err)
	}
	if !opts.Stdin || opts.Container != "container1" {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "attaching to pod 'to-be-attached-pod' is not allowed"}}
}

// admitData refuses an object (a ConfigMap or a custom resource) whose
// data has webhook-e2e-test: webhook-disallow, and the deletion of one
// with webhook-nondeletable; want, if set, is the only resource it takes.
func admitData(ar *admissionv1.AdmissionReview, what string, want metav1.GroupVersionResource) *admissionv1.AdmissionResponse {
	req := ar.Request
	if want.Resource != "" && req.Resource != want {
		return nil
	}
	raw := req.Object.Raw
	if req.Operation == admissionv1.Delete {
		raw = req.OldObject.Raw
	}
	var obj struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return errorResponse(err)
	}
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	switch v := obj.Data["webhook-e2e-test"]; {
	case v == "webhook-disallow" && (req.Operation == admissionv1.Create || req.Operation == admissionv1.Update):
		resp.Allowed = false
		reason := "the configmap contains unwanted key and value"
		if what != "configmap" {
			reason = "the custom resource contains unwanted data"
		}
		resp.Result = &metav1.Status{Reason: metav1.StatusReason(reason)}
	case v == "webhook-nondeletable" && req.Operation == admissionv1.Delete:
		resp.Allowed = false
		resp.Result = &metav1.Status{Reason: metav1.StatusReason(fmt.Sprintf("the %s cannot be deleted because it contains unwanted key and value", what))}
	}
	return resp
}

// mutateData adds mutation-stage-1 to data with mutation-start, and
// mutation-stage-2 to data with mutation-stage-1: two webhooks on this
// path, one after the other, add both.
func mutateData(ar *admissionv1.AdmissionReview, want *metav1.GroupVersionResource) *admissionv1.AdmissionResponse {
	if want != nil && ar.Request.Resource != *want {
		return nil
	}
	var obj struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(ar.Request.Object.Raw, &obj); err != nil {
		return errorResponse(err)
	}
	patch := ""
	if obj.Data["mutation-start"] == "yes" {
		patch = `[{ "op": "add", "path": "/data/mutation-stage-1", "value": "yes" }]`
	}
	if obj.Data["mutation-stage-1"] == "yes" {
		patch = `[{ "op": "add", "path": "/data/mutation-stage-2", "value": "yes" }]`
	}
	if patch == "" {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	return jsonPatch(patch)
}

// admitCRD refuses a CustomResourceDefinition labelled
// webhook-e2e-test: webhook-disallow.
func admitCRD(_ *http.Request, ar *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	res := ar.Request.Resource
	if res.Group != "apiextensions.k8s.io" || res.Resource != "customresourcedefinitions" || (res.Version != "v1" && res.Version != "v1beta1") {
		return errorResponse(fmt.Errorf("expect resource to be one of [%v, %v] but got %v",
			metav1.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1beta1", Resource: "customresourcedefinitions"},
			metav1.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, res))
	}
	var crd struct {
		metav1.ObjectMeta `json:"metadata,omitempty"`
	}
	if err := json.Unmarshal(ar.Request.Object.Raw, &crd); err != nil {
		return errorResponse(err)
	}
	if crd.Labels["webhook-e2e-test"] == "webhook-disallow" {
		return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "the crd contains unwanted label"}}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}
