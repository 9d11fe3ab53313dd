package authorization

import (
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Attributes are what an authorizer judges: who asks, the verb, and what
// on. A resource request names a resource,
//
//	GET /api/v1/namespaces/default/pods/web/log
//	→ verb get, API group "", resource pods, subresource log, namespace default, name web
//
// and any other request a path, whose verb is the HTTP method in lower
// case: GET /healthz → verb get, path /healthz.
type Attributes struct {
	User authenticationv1.UserInfo
	// Verb is Kubernetes' verb for resource requests (get, list, watch,
	// create, update, patch, delete, deletecollection, and the special
	// ones a check names: bind, escalate, impersonate) or the lower-case
	// method for paths.
	Verb string

	ResourceRequest bool
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Namespace       string // "" for the cluster scope: a cluster-scoped kind, or all namespaces
	Name            string
	// FieldSelector is a list's or watch's fieldSelector, as sent: the
	// Node authorizer lets a kubelet list only the pods bound to it
	// (spec.nodeName=<node>).
	FieldSelector string

	Path string // non-resource requests only
}

// Forbidden is kube-apiserver's 403 for a request no authorizer allowed,
// word for word:
//
//	pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"
//	nodes "node01" is forbidden: User "jane" cannot get resource "nodes" in API group "" at the cluster scope
//	forbidden: User "system:anonymous" cannot get path "/api"
//
// reason, if any, follows after a colon (an RBAC binding to a missing role).
func Forbidden(a Attributes, reason string) error {
	msg := forbiddenMessage(a)
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	return apierrors.NewForbidden(gr, a.Name, plainError(msg))
}

func forbiddenMessage(a Attributes) string {
	user := a.User.Username
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", user, a.Verb, a.Path)
	}
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", user, a.Verb, resource, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", user, a.Verb, resource, a.APIGroup)
}

// plainError is a message as an error, without fmt's verbs being read in it.
type plainError string

func (e plainError) Error() string { return string(e) }
