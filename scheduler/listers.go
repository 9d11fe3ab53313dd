package scheduler

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/scheduler/framework"
)

// namespaceLister is framework.NamespaceLister over the namespace
// informer's cache. The API server labels every namespace
// kubernetes.io/metadata.name=<name>, so a namespaceSelector can always
// pick namespaces by name.
type namespaceLister struct{ cache *client.Cache }

var _ framework.NamespaceLister = namespaceLister{}

func (l namespaceLister) Get(name string) (*corev1.Namespace, bool) {
	obj, ok := l.cache.Get(name)
	if !ok {
		return nil, false
	}
	return obj.(*corev1.Namespace), true
}

func (l namespaceLister) List(selector labels.Selector) []*corev1.Namespace {
	var out []*corev1.Namespace
	for _, obj := range l.cache.List() {
		if ns := obj.(*corev1.Namespace); selector.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns)
		}
	}
	return out
}

// serviceLister is framework.ServiceLister over the service informer's
// cache, indexed by namespace.
type serviceLister struct{ cache *client.Cache }

var _ framework.ServiceLister = serviceLister{}

func (l serviceLister) List(namespace string) []*corev1.Service {
	objs := l.cache.ByIndex(client.IndexByNamespace, namespace)
	out := make([]*corev1.Service, len(objs))
	for i, obj := range objs {
		out[i] = obj.(*corev1.Service)
	}
	return out
}

// replicaSetLister and replicationControllerLister are the framework's
// listers over the ReplicaSet and ReplicationController informers' caches,
// keyed namespace/name.
type (
	replicaSetLister            struct{ cache *client.Cache }
	replicationControllerLister struct{ cache *client.Cache }
)

var (
	_ framework.ReplicaSetLister            = replicaSetLister{}
	_ framework.ReplicationControllerLister = replicationControllerLister{}
)

func (l replicaSetLister) Get(namespace, name string) (*appsv1.ReplicaSet, bool) {
	obj, ok := l.cache.Get(namespace + "/" + name)
	if !ok {
		return nil, false
	}
	return obj.(*appsv1.ReplicaSet), true
}

func (l replicationControllerLister) Get(namespace, name string) (*corev1.ReplicationController, bool) {
	obj, ok := l.cache.Get(namespace + "/" + name)
	if !ok {
		return nil, false
	}
	return obj.(*corev1.ReplicationController), true
}
