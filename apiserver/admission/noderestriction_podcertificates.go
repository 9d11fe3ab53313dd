package admission

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization"
)

var podCertificateRequests = certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests")

// admitNodesPodCertificateRequest is Kubernetes' NodeRestriction for
// PodCertificateRequests: a node only creates them, each for a pod bound
// to it, naming the node, the pod and the pod's service account by the
// names and uids stored, for a signer one of the pod's podCertificate
// volumes names (or that the node is authorized to request for the
// service account). A mirror pod gets no certificate.
//
// A uid that differs, or an object not found yet, may be the watch cache
// lagging behind: those are errors that a retry may cure, not 403s, as in
// Kubernetes.
func admitNodesPodCertificateRequest(ctx context.Context, name string, a *Attributes, objs Objects) error {
	if a.Operation != Create {
		return forbidden(a, "unexpected operation %v", a.Operation)
	}
	if a.Subresource != "" {
		return forbidden(a, "unexpected subresource %v", a.Subresource)
	}
	req := a.Object.(*certificatesv1.PodCertificateRequest)
	podKey := a.Namespace + "/" + req.Spec.PodName
	if string(req.Spec.NodeName) != name {
		return forbidden(a, "PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", req.Spec.NodeName, name)
	}
	obj, err := objs.Get(ctx, nodes, "", name)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", req.Spec.NodeName, err)
	} else if err != nil {
		return forbidden(a, "while retrieving node %q named in the PodCertificateRequest: %v", req.Spec.NodeName, err)
	}
	if uid := obj.(*corev1.Node).UID; uid != req.Spec.NodeUID {
		return fmt.Errorf("PodCertificateRequest for pod %q names node UID %q, inconsistent with the running node (%q)", podKey, req.Spec.NodeUID, uid)
	}

	obj, err = objs.Get(ctx, pods, a.Namespace, req.Spec.PodName)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", podKey, err)
	} else if err != nil {
		return forbidden(a, "while retrieving pod %q named in the PodCertificateRequest: %v", podKey, err)
	}
	pod := obj.(*corev1.Pod)
	switch _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; {
	case req.Spec.PodUID != pod.UID:
		return fmt.Errorf("PodCertificateRequest for pod %q contains pod UID (%q) which differs from running pod %q", podKey, req.Spec.PodUID, pod.UID)
	case pod.Spec.NodeName != name:
		return forbidden(a, "pod %q is not running on node %q named in the PodCertificateRequest", podKey, req.Spec.NodeName)
	case mirror:
		return forbidden(a, "pod %q is a mirror pod", podKey)
	case req.Spec.ServiceAccountName != pod.Spec.ServiceAccountName:
		return forbidden(a, "PodCertificateRequest for pod %q contains serviceAccountName (%q) that differs from running pod (%q)",
			podKey, req.Spec.ServiceAccountName, pod.Spec.ServiceAccountName)
	}

	saKey := a.Namespace + "/" + req.Spec.ServiceAccountName
	obj, err = objs.Get(ctx, serviceAccounts, a.Namespace, req.Spec.ServiceAccountName)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", saKey, err)
	} else if err != nil {
		return forbidden(a, "while retrieving service account %q named in the PodCertificateRequest: %v", saKey, err)
	}
	if uid := obj.(*corev1.ServiceAccount).UID; uid != req.Spec.ServiceAccountUID {
		return fmt.Errorf("PodCertificateRequest for pod %q names service account UID %q, which differs from the running service account (%q)",
			podKey, req.Spec.ServiceAccountUID, uid)
	}
	if mountsSigner(pod, req.Spec.SignerName) {
		return nil
	}
	return authorizeSigner(ctx, a, req)
}

// mountsSigner: one of pod's podCertificate volumes names signer.
func mountsSigner(pod *corev1.Pod, signer string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.PodCertificate != nil && src.PodCertificate.SignerName == signer {
				return true
			}
		}
	}
	return false
}

// authorizeSigner: for a signer the pod does not mount, the node needs
// the verb request-serviceaccounts-podcertificate-signer on the
// "resource" named after the signer (its slash a colon, which RBAC can
// hold), for the service account by name.
func authorizeSigner(ctx context.Context, a *Attributes, req *certificatesv1.PodCertificateRequest) error {
	user, _ := authentication.UserFrom(ctx)
	attrs := authorization.Attributes{User: user, Verb: "request-serviceaccounts-podcertificate-signer", ResourceRequest: true,
		APIGroup: a.Resource.Group, APIVersion: a.Resource.Version, Resource: strings.ReplaceAll(req.Spec.SignerName, "/", ":"),
		Namespace: a.Namespace, Name: req.Spec.ServiceAccountName}
	d, _, err := authorization.From(ctx).Authorize(ctx, attrs)
	switch {
	case d == authorization.Allow:
		return nil
	case err != nil:
		return forbidden(a, "error authorizing %s to request podcertificaterequests for signer %q: %v", user.Username, req.Spec.SignerName, err)
	}
	return forbidden(a, "pod %q does not mount a podCertificate projected volume for signer %q", a.Namespace+"/"+req.Spec.PodName, req.Spec.SignerName)
}
