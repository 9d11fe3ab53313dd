package certificates

import (
	"context"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization"
)

// PodCertificateRequests are how a pod gets an X.509 certificate of its
// own, for mTLS between workloads (Kubernetes' podCertificate projected
// volumes, GA in v1.37):
//
//  1. a pod mounts a podCertificate projected source naming a signer
//     ("example.com/spiffe") and a key type;
//  2. its kubelet generates the key, which never leaves the node, and
//     creates a PodCertificateRequest in the pod's namespace: the pod,
//     its service account and node by name and uid (NodeRestriction
//     checks them against what is stored), and a stub PKCS#10 request
//     signed by the key;
//  3. the signer, a controller of its own that watches the requests of
//     its signerName, writes status once through the status
//     subresource: Issued with a certificate chain for that key (and
//     when to refresh it), or Denied, or Failed;
//  4. the kubelet writes the key and chain into the pod's volume and only
//     then starts its containers.
//
// The spec is the kubelet's and immutable; the status is the signer's,
// who needs the "sign" verb on the signer (resource "signers").
var PodCertificateRequests = NewPodCertificateRequests(clock.RealClock{})

// defaultMaxExpirationSeconds is maxExpirationSeconds when the request
// leaves it out: a day, Kubernetes' +default.
const defaultMaxExpirationSeconds = 24 * 60 * 60

// NewPodCertificateRequests is the kind with clk as the API server's
// clock, which an issuance's notBefore must be near.
func NewPodCertificateRequests(clk clock.PassiveClock) *apiserver.Resource {
	return &apiserver.Resource{
		GroupVersion: certificatesv1.SchemeGroupVersion, Name: "podcertificaterequests", Kind: "PodCertificateRequest", Namespaced: true,
		Subresources: []apiserver.Subresource{apiserver.WritesSubresource("status", func(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
			return updatePodCertificateRequestStatus(cur, next, clk.Now())
		})},
		New:     func() runtime.Object { return &certificatesv1.PodCertificateRequest{} },
		NewList: func() runtime.Object { return &certificatesv1.PodCertificateRequestList{} },
		PrepareForCreate: func(obj runtime.Object) {
			obj.(*certificatesv1.PodCertificateRequest).Status = certificatesv1.PodCertificateRequestStatus{}
		},
		Default: func(obj runtime.Object) {
			if r := obj.(*certificatesv1.PodCertificateRequest); r.Spec.MaxExpirationSeconds == nil {
				seconds := int32(defaultMaxExpirationSeconds)
				r.Spec.MaxExpirationSeconds = &seconds
			}
		},
		Validate: func(obj, old runtime.Object) field.ErrorList {
			r := obj.(*certificatesv1.PodCertificateRequest)
			if old == nil {
				return validatePodCertificateRequestCreate(r)
			}
			return validatePodCertificateRequestUpdate(r, old.(*certificatesv1.PodCertificateRequest))
		},
		Admit: admitSigner,
		// What the kubelet (spec.nodeName) and signers (spec.signerName)
		// list and watch by.
		Fields: func(obj runtime.Object) fields.Set {
			r := obj.(*certificatesv1.PodCertificateRequest)
			return fields.Set{"spec.signerName": r.Spec.SignerName, "spec.podName": r.Spec.PodName, "spec.nodeName": string(r.Spec.NodeName)}
		},
		// Kubernetes prints UnverifiedUserAnnotations with -o wide only.
		Columns: []apiserver.Column{{Name: "PodName", Type: "string"}, {Name: "ServiceAccountName", Type: "string"},
			{Name: "NodeName", Type: "string"}, {Name: "SignerName", Type: "string"}, {Name: "State", Type: "string"},
			{Name: "UnverifiedUserAnnotations", Type: "string", Priority: 1}},
		Row: func(obj runtime.Object, _ time.Time) []any {
			r := obj.(*certificatesv1.PodCertificateRequest)
			return []any{r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName, requestState(r),
				labels.FormatLabels(r.Spec.UnverifiedUserAnnotations)}
		},
	}
}

// requestState is kubectl's STATE: Pending until a terminal condition.
func requestState(r *certificatesv1.PodCertificateRequest) string {
	if t := terminal(r); t != "" {
		return t
	}
	return "Pending"
}

// updatePodCertificateRequestStatus is Kubernetes' StatusStrategy: the
// client's status on the stored object (its spec and metadata kept, as
// ResetObjectMetaForStatus), validated against the stored one.
func updatePodCertificateRequestStatus(cur, next runtime.Object, now time.Time) (runtime.Object, field.ErrorList) {
	prev := cur.(*certificatesv1.PodCertificateRequest)
	out := prev.DeepCopy()
	out.Status = next.(*certificatesv1.PodCertificateRequest).Status
	return out, validatePodCertificateRequestStatusUpdate(out, prev, now)
}

// admitSigner is the status strategy's authorization check: whoever
// changes a request's status must be allowed to "sign" for its signer,
// the synthetic resource signers in certificates.k8s.io, by the
// signer's name or its domain's wildcard ("example.com/*"), as
// Kubernetes' IsAuthorizedForSignerName asks. A status can only change
// through the status subresource (the main resource keeps it), after the
// status has been validated.
func admitSigner(ctx context.Context, _ admission.Objects, obj, old runtime.Object) error {
	if old == nil {
		return nil
	}
	r, prev := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
	if equality.Semantic.DeepEqual(r.Status, prev.Status) {
		return nil
	}
	signer := field.NewPath("spec", "signerName")
	gk := certificatesv1.SchemeGroupVersion.WithKind("PodCertificateRequest").GroupKind()
	user, ok := authentication.UserFrom(ctx)
	if !ok {
		return apierrors.NewInvalid(gk, r.Name, field.ErrorList{
			field.InternalError(signer, fmt.Errorf(`cannot determine calling user to perform "sign" check`))})
	}
	authz := authorization.From(ctx)
	domain, _, _ := strings.Cut(prev.Spec.SignerName, "/")
	for _, name := range []string{prev.Spec.SignerName, domain + "/*"} {
		d, _, _ := authz.Authorize(ctx, authorization.Attributes{User: user, Verb: "sign", ResourceRequest: true,
			APIGroup: certificatesv1.GroupName, APIVersion: "*", Resource: "signers", Name: name})
		if d == authorization.Allow {
			return nil
		}
	}
	return apierrors.NewInvalid(gk, r.Name, field.ErrorList{field.Forbidden(signer,
		fmt.Sprintf("User %q is not permitted to \"sign\" for signer %q", user.Username, prev.Spec.SignerName))})
}
