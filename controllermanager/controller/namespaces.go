package controller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
)

// NamespaceActive reports whether the namespace is in the shared
// namespace informer's cache and Active: what a controller that puts an
// object into every namespace checks first, since the API server refuses
// new content in a namespace that is being deleted.
func NamespaceActive(namespaces *client.Informer, name string) bool {
	obj, ok := namespaces.Cache().Get(name)
	return ok && obj.(*corev1.Namespace).Status.Phase == corev1.NamespaceActive
}
