package node

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/apiserver/authorization/rbac"
	"github.com/mkube/mkube/apiserver/authorization/rbac/bootstrappolicy"
)

// Authorizer is --authorization-mode=Node: Kubernetes' NodeAuthorizer
// (plugin/pkg/auth/authorizer/node), judging nodes' requests only.
type Authorizer struct {
	graph *Graph
	// rules are what every node may do on the kinds not subdivided
	// below: Kubernetes' system:node role, which is not bound to anyone.
	rules []rbacv1.PolicyRule
}

// New is the Node authorizer on graph.
func New(graph *Graph) *Authorizer {
	return &Authorizer{graph: graph, rules: bootstrappolicy.NodeRules()}
}

// The kinds the Node authorizer judges by the node's own objects.
var (
	secrets           = schema.GroupResource{Resource: "secrets"}
	configMaps        = schema.GroupResource{Resource: "configmaps"}
	claims            = schema.GroupResource{Resource: "persistentvolumeclaims"}
	volumes           = schema.GroupResource{Resource: "persistentvolumes"}
	resourceClaims    = schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaims"}
	volumeAttachments = schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"}
	serviceAccounts   = schema.GroupResource{Resource: "serviceaccounts"}
	leases            = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	csiNodes          = schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}
	nodes             = schema.GroupResource{Resource: "nodes"}
	pods              = schema.GroupResource{Resource: "pods"}
	podCertificates   = schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}
)

// noRelationship is Kubernetes' reason for an object no pod of the node
// leads to.
func noRelationship(node string) string {
	return fmt.Sprintf("no relationship found between node '%s' and this object", node)
}

// Authorize allows a node what concerns it (the package's doc), and has
// no opinion otherwise, giving Kubernetes' reason.
func (a *Authorizer) Authorize(_ context.Context, attrs authorization.Attributes) (authorization.Decision, string, error) {
	node, isNode := Identify(attrs.User)
	if !isNode {
		return authorization.NoOpinion, "", nil
	}
	if node == "" {
		return authorization.NoOpinion, fmt.Sprintf("unknown node for user %q", attrs.User.Username), nil
	}
	if attrs.ResourceRequest {
		switch (schema.GroupResource{Group: attrs.APIGroup, Resource: attrs.Resource}) {
		case secrets:
			return a.readNamespaced(node, secretKind, &attrs)
		case configMaps:
			return a.readNamespaced(node, configMapKind, &attrs)
		case claims:
			if attrs.Subresource == "status" {
				return a.statusUpdate(node, claimKind, &attrs)
			}
			return a.get(node, claimKind, &attrs)
		case volumes:
			return a.getVolume(node, &attrs)
		case resourceClaims:
			return a.get(node, resourceClaimKind, &attrs)
		case volumeAttachments:
			// mkube attaches no volumes: no attachment leads to a node.
			return authorization.NoOpinion, noRelationship(node), nil
		case serviceAccounts:
			if attrs.Verb == "get" && attrs.Subresource == "" { // its uid, for a PodCertificateRequest
				return a.readNamespaced(node, serviceAccountKind, &attrs)
			}
			return a.createToken(node, &attrs)
		case leases:
			return ownLease(node, &attrs)
		case csiNodes:
			return ownCSINode(node, &attrs)
		case nodes:
			return ownNode(node, &attrs)
		case pods:
			return a.pod(node, &attrs)
		case podCertificates:
			return podCertificateRequest(node, &attrs) // podcertificaterequests.go
		}
	}
	for i := range a.rules {
		if rbac.RuleAllows(&attrs, &a.rules[i]) {
			return authorization.Allow, "", nil
		}
	}
	return authorization.NoOpinion, "", nil
}

// readNamespaced: get, list or watch of one named object (a list or
// watch names it by fieldSelector metadata.name, as the kubelet's
// per-object watches do) a pod of the node refers to.
func (a *Authorizer) readNamespaced(node string, k kind, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	switch {
	case attrs.Verb != "get" && attrs.Verb != "list" && attrs.Verb != "watch":
		return authorization.NoOpinion, "can only read resources of this type", nil
	case attrs.Subresource != "":
		return authorization.NoOpinion, "cannot read subresource", nil
	case attrs.Namespace == "":
		return authorization.NoOpinion, "can only read namespaced object of this type", nil
	}
	return a.related(node, k, attrs)
}

// get: a get of one object a pod of the node refers to.
func (a *Authorizer) get(node string, k kind, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	switch {
	case attrs.Verb != "get":
		return authorization.NoOpinion, "can only get individual resources of this type", nil
	case attrs.Subresource != "":
		return authorization.NoOpinion, "cannot get subresource", nil
	}
	return a.related(node, k, attrs)
}

// statusUpdate: an update or patch of the status of a claim the node's
// pods use (the kubelet reports a volume's resize).
func (a *Authorizer) statusUpdate(node string, k kind, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	if attrs.Verb != "update" && attrs.Verb != "patch" {
		return authorization.NoOpinion, "can only get/update/patch this type", nil
	}
	return a.related(node, k, attrs)
}

func (a *Authorizer) related(node string, k kind, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	if attrs.Name == "" {
		return authorization.NoOpinion, "No Object name found", nil
	}
	if !a.graph.reaches(node, ref{k, attrs.Namespace, attrs.Name}) {
		return authorization.NoOpinion, noRelationship(node), nil
	}
	return authorization.Allow, "", nil
}

// getVolume: a get of a PersistentVolume bound to a claim of the node's
// pods.
func (a *Authorizer) getVolume(node string, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	switch {
	case attrs.Verb != "get":
		return authorization.NoOpinion, "can only get individual resources of this type", nil
	case attrs.Subresource != "":
		return authorization.NoOpinion, "cannot get subresource", nil
	case attrs.Name == "":
		return authorization.NoOpinion, "No Object name found", nil
	case !a.graph.volumeReaches(node, attrs.Name):
		return authorization.NoOpinion, noRelationship(node), nil
	}
	return authorization.Allow, "", nil
}

// createToken: a token (serviceaccounts/NAME/token) of a service account
// a pod of the node runs as; NodeRestriction then checks that the token
// is bound to such a pod.
func (a *Authorizer) createToken(node string, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	if attrs.Verb != "create" || attrs.Name == "" {
		return authorization.NoOpinion, "can only create tokens for individual service accounts", nil
	}
	if attrs.Subresource != "token" {
		return authorization.NoOpinion, "can only create token subresource of serviceaccount", nil
	}
	if !a.graph.reaches(node, ref{serviceAccountKind, attrs.Namespace, attrs.Name}) {
		return authorization.NoOpinion, noRelationship(node), nil
	}
	return authorization.Allow, "", nil
}

// RulesFor: a node's rights depend on its pods and are not rules, so the
// list is incomplete for nodes (`kubectl auth can-i --list` says so), as
// in Kubernetes; for anyone else this authorizer adds nothing.
func (a *Authorizer) RulesFor(user authenticationv1.UserInfo, _ string) ([]rbacv1.PolicyRule, bool, error) {
	if _, isNode := Identify(user); isNode {
		return nil, true, fmt.Errorf("node authorizer does not support user rule resolution")
	}
	return nil, false, nil
}
