package webhook

import (
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The AdmissionReview is what a webhook is sent and answers with:
//
//	{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
//	 "request": {"uid": "…", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
//	             "resource": {"group": "", "version": "v1", "resource": "configmaps"},
//	             "name": "cm", "namespace": "default", "operation": "CREATE",
//	             "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", …]},
//	             "object": {…the ConfigMap…}, "oldObject": null, "dryRun": false,
//	             "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", …}}}
//
//	{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
//	 "response": {"uid": "<the request's>", "allowed": false,
//	              "status": {"code": 403, "message": "no ConfigMaps on Fridays"}}}
//
// kind and resource are what the matching rule named (an equivalent
// version, with matchPolicy Equivalent); requestKind and
// requestResource what the client wrote. v1beta1 has the same fields,
// and a webhook that lists only it gets it.

// reviewVersion is the first AdmissionReview version of the webhook's
// list this server sends.
func reviewVersion(versions []string) (string, error) {
	for _, v := range versions {
		if v == "v1" || v == "v1beta1" {
			return v, nil
		}
	}
	return "", fmt.Errorf("webhook does not accept known AdmissionReview versions (v1, v1beta1)")
}

// newReview is the AdmissionReview for inv, in version (v1 or v1beta1),
// about the object and old object as inv's kind.
func newReview(uid types.UID, version string, r *request, inv *invocation, obj, old runtime.Object) *admissionv1.AdmissionReview {
	a := r.a
	dryRun := a.DryRun
	user := r.user
	if user.Extra == nil {
		user.Extra = map[string]authenticationv1.ExtraValue{}
	}
	return &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/" + version, Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:                uid,
			Kind:               metav1.GroupVersionKind(inv.kind),
			Resource:           metav1.GroupVersionResource(inv.resource),
			SubResource:        a.Subresource,
			RequestKind:        ptrGVK(a.Kind),
			RequestResource:    ptrGVR(a.Resource),
			RequestSubResource: a.Subresource,
			Name:               a.Name,
			Namespace:          r.namespace(),
			Operation:          admissionv1.Operation(a.Operation),
			UserInfo:           user,
			Object:             runtime.RawExtension{Object: obj},
			OldObject:          runtime.RawExtension{Object: old},
			DryRun:             &dryRun,
			Options:            runtime.RawExtension{Object: a.Options},
		},
	}
}

func ptrGVK(k schema.GroupVersionKind) *metav1.GroupVersionKind {
	v := metav1.GroupVersionKind(k)
	return &v
}

func ptrGVR(r schema.GroupVersionResource) *metav1.GroupVersionResource {
	v := metav1.GroupVersionResource(r)
	return &v
}

// answer is a webhook's response, checked.
type answer struct {
	allowed  bool
	result   *metav1.Status
	patch    []byte // a JSON patch, mutating webhooks only
	warnings []string
}

// readAnswer decodes and checks a webhook's response as Kubernetes'
// VerifyAdmissionResponse does: a response is there, for this request
// (v1 echoes the uid), of the version sent; only a mutating webhook may
// patch, and says so with patchType JSONPatch (v1beta1 implies it).
func readAnswer(body []byte, uid types.UID, version string, mutating bool) (*answer, error) {
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, fmt.Errorf("decode AdmissionReview: %w", err)
	}
	resp := review.Response
	if resp == nil {
		return nil, fmt.Errorf("webhook response was absent")
	}
	if want := "admission.k8s.io/" + version; version == "v1" {
		if resp.UID != uid {
			return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, resp.UID)
		}
		if review.APIVersion != want || review.Kind != "AdmissionReview" {
			return nil, fmt.Errorf("expected webhook response of %s, Kind=AdmissionReview, got %s, Kind=%s", want, review.APIVersion, review.Kind)
		}
	}
	ans := &answer{allowed: resp.Allowed, result: resp.Result, warnings: resp.Warnings}
	switch {
	case !mutating && len(resp.Patch) > 0:
		return nil, fmt.Errorf("validating webhook may not return response.patch")
	case !mutating && resp.PatchType != nil:
		return nil, fmt.Errorf("validating webhook may not return response.patchType")
	case !mutating:
	case version == "v1beta1":
		ans.patch = resp.Patch
	case len(resp.Patch) > 0 && resp.PatchType == nil:
		return nil, fmt.Errorf("webhook returned response.patch but not response.patchType")
	case len(resp.Patch) == 0 && resp.PatchType != nil:
		return nil, fmt.Errorf("webhook returned response.patchType but not response.patch")
	case resp.PatchType != nil && *resp.PatchType != admissionv1.PatchTypeJSONPatch:
		return nil, fmt.Errorf("unsupported patch type %q", *resp.PatchType)
	default:
		ans.patch = resp.Patch
	}
	return ans, nil
}
