package node

import (
	"fmt"

	"github.com/mkube/mkube/apiserver/authorization"
)

// podCertificateRequest is Kubernetes' authorizePodCertificateRequest: a
// node creates the PodCertificateRequests of its pods' podCertificate
// volumes (NodeRestriction then checks that the pod is bound to it, by
// name and uid), and lists and watches those naming it (fieldSelector
// spec.nodeName=<node>), to see them issued. The status is the signer's.
//
// Kubernetes also lets a node get one of its requests by name, through
// its graph; mkube's graph holds no PodCertificateRequests (the kubelet
// watches instead), so a get has no opinion.
func podCertificateRequest(node string, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	if attrs.Subresource != "" {
		return authorization.NoOpinion, "nodes may not access the status subresource of PodCertificateRequests", nil
	}
	switch attrs.Verb {
	case "create":
		return authorization.Allow, "", nil
	case "get":
		return authorization.NoOpinion, noRelationship(node), nil
	case "list", "watch":
		if selectsNode(attrs.FieldSelector, node) {
			return authorization.Allow, "", nil
		}
		return authorization.NoOpinion, "can only list/watch podcertificaterequests with nodeName field selector", nil
	}
	return authorization.NoOpinion, fmt.Sprintf("nodes may not %s podcertificaterequests", attrs.Verb), nil
}
