package core

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubesa "k8s.io/apiserver/pkg/authentication/serviceaccount"
	tokenjwt "k8s.io/apiserver/pkg/authentication/token/jwt"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/audit"
	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
	"github.com/mkube/mkube/client"
)

// tokenSubresource is POST serviceaccounts/<name>/token, the TokenRequest
// API: `kubectl create token robot [--duration 2h] [--audience x]
// [--bound-object-kind Pod --bound-object-name web]`, and what the kubelet
// asks for each pod's projected token. It answers the TokenRequest with
// status.token, a JWT signed by the API server (package serviceaccount),
// as kube-apiserver's TokenREST does.
var tokenSubresource = apiserver.Subresource{Name: "token", Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest",
	Verbs: []string{"create"}, Serve: serveToken}

var tokenRequestKind = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

// Kubernetes' TokenRequest bounds: ten minutes to 2^32 seconds, an hour
// by default.
const (
	minTokenSeconds     = 10 * 60
	maxTokenSeconds     = 1 << 32
	defaultTokenSeconds = 60 * 60
)

// The kubelet's default token (the ServiceAccount admission plugin's
// 3607 s) is extended to a year, with a warning after its hour, so that
// clients that never reload their token file keep working while they are
// found out: --service-account-extend-token-expiration, on by default.
const (
	warnOnlyBoundTokenSeconds = 60*60 + 7
	extendedTokenSeconds      = 24 * 365 * 60 * 60
)

func serveToken(q *apiserver.Request) {
	tokens := q.ServiceAccountTokens()
	if tokens == nil {
		q.Fail(apierrors.NewNotFound(q.Storage.Resource().GroupResource(), q.Info.Name+"/token"))
		return
	}
	obj, err := q.DecodeBodyAs(tokenRequestKind, &authenticationv1.TokenRequest{})
	if err != nil {
		q.Fail(err)
		return
	}
	req := obj.(*authenticationv1.TokenRequest)
	name, ns := q.Info.Name, q.Info.Namespace
	gk := tokenRequestKind.GroupKind()
	if req.Name != "" && req.Name != name {
		q.Fail(apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), req.Name, "must match the service account name if specified")}))
		return
	}
	if req.Namespace != "" && req.Namespace != ns {
		q.Fail(apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), req.Namespace, "must match the service account namespace if specified")}))
		return
	}
	ctx := q.Context()
	saObj, err := q.Storage.Get(ctx, ns, name)
	if err != nil {
		q.Fail(err)
		return
	}
	sa := saObj.(*corev1.ServiceAccount)
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = tokens.APIAudiences()
	}
	if req.Spec.ExpirationSeconds == nil {
		req.Spec.ExpirationSeconds = ptr.To[int64](defaultTokenSeconds)
	}
	req.Name, req.Namespace = sa.Name, sa.Namespace
	req.Status = authenticationv1.TokenRequestStatus{}
	if errs := validateTokenRequest(req); len(errs) > 0 {
		q.Fail(apierrors.NewInvalid(gk, "", errs))
		return
	}
	if err := q.Admit(req.DeepCopy()); err != nil { // NodeRestriction: a node's tokens are for its pods
		q.Fail(err)
		return
	}
	issue := serviceaccount.Request{ServiceAccount: sa, Audiences: req.Spec.Audiences, ExpirationSeconds: *req.Spec.ExpirationSeconds}
	if err := bindToken(q, req.Spec.BoundObjectRef, &issue); err != nil {
		q.Fail(err)
		return
	}
	if issue.Pod != nil && issue.ExpirationSeconds == warnOnlyBoundTokenSeconds && isSubset(req.Spec.Audiences, tokens.APIAudiences()) {
		issue.WarnAfterSeconds, issue.ExpirationSeconds = issue.ExpirationSeconds, extendedTokenSeconds
	}
	issued, err := tokens.Issue(issue)
	if err != nil {
		q.Fail(apierrors.NewInternalError(err))
		return
	}
	audit.AddAnnotation(ctx, kubesa.IssuedCredentialIDAuditAnnotationKey, tokenjwt.CredentialIDForJTI(issued.ID))
	req.CreationTimestamp = metav1.NewTime(issued.IssuedAt)
	// The expiry the client is told is the one it asked for, even for an
	// extended kubelet token: the kubelet renews it on that schedule.
	req.Status = authenticationv1.TokenRequestStatus{Token: issued.Token,
		ExpirationTimestamp: metav1.NewTime(issued.IssuedAt.Add(time.Duration(*req.Spec.ExpirationSeconds) * time.Second))}
	req.TypeMeta = metav1.TypeMeta{APIVersion: tokenRequestKind.GroupVersion().String(), Kind: tokenRequestKind.Kind}
	q.Log().Info("issued a service account token", "serviceaccount", client.KeyOf(sa), "audiences", req.Spec.Audiences,
		"expirationSeconds", issue.ExpirationSeconds, "boundTo", boundName(req.Spec.BoundObjectRef))
	q.Respond(http.StatusCreated, req, nil)
}

// validateTokenRequest is Kubernetes' ValidateTokenRequest.
func validateTokenRequest(req *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "expirationSeconds")
	if s := *req.Spec.ExpirationSeconds; s < minTokenSeconds {
		errs = append(errs, field.Invalid(p, s, "may not specify a duration less than 10 minutes"))
	} else if s > maxTokenSeconds {
		errs = append(errs, field.Invalid(p, s, "may not specify a duration larger than 2^32 seconds"))
	}
	return errs
}

// bindToken finds the object the token is to be bound to (a Pod, a
// Secret or a Node) and checks it, in kube-apiserver's words.
func bindToken(q *apiserver.Request, ref *authenticationv1.BoundObjectReference, issue *serviceaccount.Request) error {
	if ref == nil {
		return nil
	}
	ctx, ns := q.Context(), q.Info.Namespace
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var uid string
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		obj, err := q.StorageFor(Pods.GroupVersionResource()).Get(ctx, ns, ref.Name)
		if err != nil {
			return err
		}
		pod := obj.(*corev1.Pod)
		if pod.Spec.ServiceAccountName != issue.ServiceAccount.Name {
			return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", issue.ServiceAccount.Name))
		}
		issue.Pod, uid = pod, string(pod.UID)
		if pod.Spec.NodeName != "" {
			// The token names the pod's node; a node not found is named
			// without its UID.
			issue.Node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: pod.Spec.NodeName}}
			if obj, err := q.StorageFor(Nodes.GroupVersionResource()).Get(ctx, "", pod.Spec.NodeName); err == nil {
				issue.Node = obj.(*corev1.Node)
			} else if !apierrors.IsNotFound(err) {
				return apierrors.NewInternalError(err)
			}
		}
	case gvk.Group == "" && gvk.Kind == "Node":
		obj, err := q.StorageFor(Nodes.GroupVersionResource()).Get(ctx, "", ref.Name)
		if err != nil {
			return err
		}
		issue.Node = obj.(*corev1.Node)
		uid = string(issue.Node.UID)
	case gvk.Group == "" && gvk.Kind == "Secret":
		obj, err := q.StorageFor(Secrets.GroupVersionResource()).Get(ctx, ns, ref.Name)
		if err != nil {
			return err
		}
		issue.Secret = obj.(*corev1.Secret)
		uid = string(issue.Secret.UID)
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if ref.UID != "" && string(ref.UID) != uid {
		return apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return nil
}

// isSubset: every audience is one of the API server's.
func isSubset(audiences, apiAudiences []string) bool {
	for _, a := range audiences {
		if !slices.Contains(apiAudiences, a) {
			return false
		}
	}
	return true
}

func boundName(ref *authenticationv1.BoundObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Kind + "/" + ref.Name
}
