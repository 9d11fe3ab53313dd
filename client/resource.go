package client

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource names a kind on the server and the Go types that hold it.
type Resource struct {
	GroupVersion schema.GroupVersion
	Name         string // plural, as in the URL
	Namespaced   bool
	New          func() runtime.Object
	NewList      func() runtime.Object
}

// The resources mkube's components use.
var (
	Pods = Resource{corev1.SchemeGroupVersion, "pods", true,
		func() runtime.Object { return &corev1.Pod{} }, func() runtime.Object { return &corev1.PodList{} }}
	Nodes = Resource{corev1.SchemeGroupVersion, "nodes", false,
		func() runtime.Object { return &corev1.Node{} }, func() runtime.Object { return &corev1.NodeList{} }}
	Namespaces = Resource{corev1.SchemeGroupVersion, "namespaces", false,
		func() runtime.Object { return &corev1.Namespace{} }, func() runtime.Object { return &corev1.NamespaceList{} }}
	Events = Resource{corev1.SchemeGroupVersion, "events", true,
		func() runtime.Object { return &corev1.Event{} }, func() runtime.Object { return &corev1.EventList{} }}
	ReplicaSets = Resource{appsv1.SchemeGroupVersion, "replicasets", true,
		func() runtime.Object { return &appsv1.ReplicaSet{} }, func() runtime.Object { return &appsv1.ReplicaSetList{} }}
	Deployments = Resource{appsv1.SchemeGroupVersion, "deployments", true,
		func() runtime.Object { return &appsv1.Deployment{} }, func() runtime.Object { return &appsv1.DeploymentList{} }}
	Leases = Resource{coordinationv1.SchemeGroupVersion, "leases", true,
		func() runtime.Object { return &coordinationv1.Lease{} }, func() runtime.Object { return &coordinationv1.LeaseList{} }}
)

// Path builds the URL path of the resource: its collection in namespace
// (all namespaces if ""), or one object if name is set, or one of its
// subresources.
//
//	Pods.Path("default", "web-1", "binding") = /api/v1/namespaces/default/pods/web-1/binding
func (r Resource) Path(namespace, name string, subresource ...string) string {
	var b strings.Builder
	if r.GroupVersion.Group == "" {
		b.WriteString("/api/" + r.GroupVersion.Version)
	} else {
		b.WriteString("/apis/" + r.GroupVersion.Group + "/" + r.GroupVersion.Version)
	}
	if r.Namespaced && namespace != "" {
		b.WriteString("/namespaces/" + namespace)
	}
	b.WriteString("/" + r.Name)
	if name != "" {
		b.WriteString("/" + name)
	}
	for _, s := range subresource {
		b.WriteString("/" + s)
	}
	return b.String()
}
