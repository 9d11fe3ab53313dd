package certificates

import (
	"context"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/certificate/csr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/authentication"
)

// CertificateSigningRequests are cluster-scoped. Each part of a request
// has its own writer, as in Kubernetes' three strategies: the main
// resource changes metadata only (spec and status are kept), approval
// writes status.conditions, status the certificate and the conditions
// other than Approved and Denied.
var CertificateSigningRequests = &apiserver.Resource{
	GroupVersion: certificatesv1.SchemeGroupVersion, Name: "certificatesigningrequests", Kind: "CertificateSigningRequest",
	ShortNames: []string{"csr"},
	Subresources: []apiserver.Subresource{
		apiserver.WritesSubresource("approval", updateApproval),
		apiserver.WritesSubresource("status", updateStatus),
	},
	New:      func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
	NewList:  func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
	NameRule: path.ValidatePathSegmentName, // Kubernetes' ValidateCertificateRequestName takes any name
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*certificatesv1.CertificateSigningRequest).Status = certificatesv1.CertificateSigningRequestStatus{}
	},
	Admit:    admitRequest,
	Validate: validate,
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"spec.signerName": obj.(*certificatesv1.CertificateSigningRequest).Spec.SignerName}
	},
	Columns: []apiserver.Column{{Name: "Age", Type: "string"}, {Name: "SignerName", Type: "string"}, {Name: "Requestor", Type: "string"},
		{Name: "RequestedDuration", Type: "string"}, {Name: "Condition", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		r := obj.(*certificatesv1.CertificateSigningRequest)
		requested := "<none>"
		if r.Spec.ExpirationSeconds != nil {
			requested = duration.HumanDuration(csr.ExpirationSecondsToDuration(*r.Spec.ExpirationSeconds))
		}
		return []any{apiserver.Age(r.CreationTimestamp, now), apiserver.OrNone(r.Spec.SignerName), r.Spec.Username, requested, condition(r)}
	},
}

// admitRequest is the part of Kubernetes' csrStrategy that needs the
// request: on create, spec.username, uid, groups and extra are the
// sender's, whatever the body says, so that an approver knows who asks
// (and the kubelet-client approver can trust "system:node:<name>"); on an
// update of the main resource, spec never changes.
func admitRequest(ctx context.Context, _ admission.Objects, obj, old runtime.Object) error {
	r := obj.(*certificatesv1.CertificateSigningRequest)
	if old != nil {
		r.Spec = old.(*certificatesv1.CertificateSigningRequest).Spec
		return nil
	}
	r.Spec.Username, r.Spec.UID, r.Spec.Groups, r.Spec.Extra = "", "", nil, nil
	user, ok := authentication.UserFrom(ctx)
	if !ok {
		return nil
	}
	r.Spec.Username, r.Spec.UID, r.Spec.Groups = user.Username, user.UID, user.Groups
	if len(user.Extra) > 0 {
		r.Spec.Extra = map[string]certificatesv1.ExtraValue{}
		for k, v := range user.Extra {
			r.Spec.Extra[k] = certificatesv1.ExtraValue(v)
		}
	}
	return nil
}

// condition is kubectl's CONDITION column: Denied, Approved or Pending,
// then ",Failed" and ",Issued" (Kubernetes' extractCSRStatus).
func condition(r *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	s := "Pending"
	if denied {
		s = "Denied"
	} else if approved {
		s = "Approved"
	}
	if failed {
		s += ",Failed"
	}
	if len(r.Status.Certificate) > 0 {
		s += ",Issued"
	}
	return s
}

// The main resource's PUT keeps the whole status (admitRequest keeps the
// spec); validate is Kubernetes' ValidateCertificateSigningRequestCreate
// and ...Update.
func validate(obj, old runtime.Object) field.ErrorList {
	r := obj.(*certificatesv1.CertificateSigningRequest)
	if old == nil {
		return validateRequest(r, optionsFor(r, nil))
	}
	prev := old.(*certificatesv1.CertificateSigningRequest)
	return validateUpdate(r, prev, optionsFor(r, prev))
}

// updateApproval is Kubernetes' csrApprovalStrategy: the client's
// metadata and status.conditions, the stored spec and certificate; and
// approval is the one writer that may add Approved or Denied.
func updateApproval(cur, next runtime.Object, now time.Time) (runtime.Object, field.ErrorList) {
	prev, r := cur.(*certificatesv1.CertificateSigningRequest), next.(*certificatesv1.CertificateSigningRequest)
	stampConditions(r, prev, now)
	conditions := r.Status.Conditions
	r.Spec, r.Status = prev.Spec, prev.Status
	r.Status.Conditions = conditions
	keepServerMeta(r, prev)
	opts := optionsFor(r, prev)
	opts.allowSettingApprovalConditions = true
	return r, validateUpdate(r, prev, opts)
}

// updateStatus is Kubernetes' csrStatusStrategy: the client's metadata
// and status, except that the Approved and Denied conditions stay as
// stored, and the stored spec. It may set the certificate once.
func updateStatus(cur, next runtime.Object, now time.Time) (runtime.Object, field.ErrorList) {
	prev, r := cur.(*certificatesv1.CertificateSigningRequest), next.(*certificatesv1.CertificateSigningRequest)
	r.Spec = prev.Spec
	keepConditions(r, prev, certificatesv1.CertificateApproved)
	keepConditions(r, prev, certificatesv1.CertificateDenied)
	stampConditions(r, prev, now)
	keepServerMeta(r, prev)
	opts := optionsFor(r, prev)
	opts.allowSettingCertificate = true
	return r, validateUpdate(r, prev, opts)
}

// keepServerMeta keeps what the server owns of metadata, as every update.
func keepServerMeta(r, prev *certificatesv1.CertificateSigningRequest) {
	r.UID, r.CreationTimestamp, r.Generation = prev.UID, prev.CreationTimestamp, prev.Generation
	r.DeletionTimestamp, r.DeletionGracePeriodSeconds = prev.DeletionTimestamp, prev.DeletionGracePeriodSeconds
	r.ResourceVersion = prev.ResourceVersion
}

// keepConditions puts back the stored conditions of type t, when the
// client sent as many (Kubernetes' preserveConditionInstances): a status
// writer cannot edit an approval, and adding or removing one is refused
// by validation.
func keepConditions(r, prev *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	was, is := indicesOf(prev, t), indicesOf(r, t)
	if len(was) != len(is) {
		return
	}
	for i, j := range was {
		r.Status.Conditions[is[i]] = prev.Status.Conditions[j]
	}
}

func indicesOf(r *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range r.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// stampConditions fills unset condition times, as Kubernetes'
// populateConditionTimestamps: lastUpdateTime now, lastTransitionTime the
// stored one of a condition with the same type and status, or now.
func stampConditions(r, prev *certificatesv1.CertificateSigningRequest, now time.Time) {
	for i := range r.Status.Conditions {
		c := &r.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime.Time = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime.Time = now
		for _, o := range prev.Status.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
				break
			}
		}
	}
}
