package framework

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"
)

// NodeInfoLister is the cluster as one scheduling cycle sees it: the
// cache's Snapshot, which the informers cannot change under the cycle.
// PreFilter and PreScore plugins get it to look beyond the node at hand:
// InterPodAffinity counts pods on every node, ImageLocality asks how many
// nodes hold an image.
type NodeInfoLister interface {
	// List returns every node, sorted by name.
	List() []*NodeInfo
	// Get returns one node.
	Get(name string) (*NodeInfo, bool)
	// NumNodes is len(List()).
	NumNodes() int
	// HavePodsWithAffinityList returns the nodes that hold at least one pod
	// with an inter-pod affinity or anti-affinity term.
	HavePodsWithAffinityList() []*NodeInfo
	// HavePodsWithRequiredAntiAffinityList returns the nodes that hold at
	// least one pod with a required anti-affinity term.
	HavePodsWithRequiredAntiAffinityList() []*NodeInfo
	// NumNodesWithImage is how many nodes report image name present.
	NumNodesWithImage(name string) int
}

// NamespaceLister reads namespaces as the scheduler's namespace informer
// holds them. InterPodAffinity needs their labels for namespaceSelector.
type NamespaceLister interface {
	// Get returns the namespace called name.
	Get(name string) (*corev1.Namespace, bool)
	// List returns the namespaces whose labels selector matches.
	List(selector labels.Selector) []*corev1.Namespace
}

// ServiceLister reads Services as the scheduler's service informer holds
// them. PodTopologySpread (and SelectorSpread) spread the pods that one
// Service selects.
type ServiceLister interface {
	// List returns the Services of a namespace.
	List(namespace string) []*corev1.Service
}

// ReplicaSetLister reads ReplicaSets as the scheduler's informer holds
// them: PodTopologySpread's system default constraints spread the pods a
// pod's ReplicaSet selects.
type ReplicaSetLister interface {
	// Get returns the ReplicaSet namespace/name.
	Get(namespace, name string) (*appsv1.ReplicaSet, bool)
}

// ReplicationControllerLister is ReplicaSetLister for
// ReplicationControllers.
type ReplicationControllerLister interface {
	// Get returns the ReplicationController namespace/name.
	Get(namespace, name string) (*corev1.ReplicationController, bool)
}

// Handle is what the scheduler lends the plugins it builds (Kubernetes'
// framework.Handle, reduced to what mkube's plugins use).
type Handle struct {
	// Namespaces may be nil (tests): every namespace then looks unlabelled.
	Namespaces NamespaceLister
	// Services may be nil (tests): no Service then selects any pod.
	Services ServiceLister
	// ReplicaSets and ReplicationControllers may be nil (tests): a pod's
	// controller is then not found, as if it had been deleted.
	ReplicaSets            ReplicaSetLister
	ReplicationControllers ReplicationControllerLister
	// Storage may be nil (tests): no claim, volume or class then exists
	// (storage_listers.go). StorageWriter may be nil (tests of filters):
	// VolumeBinding's PreBind then fails. Clock times what plugins wait
	// for (VolumeBinding's PreBind); nil is the real clock.
	Storage       StorageLister
	StorageWriter StorageWriter
	Clock         clock.WithTicker
	// CSINodes may be nil (tests): no node then has a CSINode, so none
	// limits its volumes (NodeVolumeLimits).
	CSINodes CSINodeLister
}

// ServicesSelecting returns the selectors of the Services in the pod's
// namespace that select it (Kubernetes' GetPodServices). A Service
// without a selector selects nothing.
func (h Handle) ServicesSelecting(pod *corev1.Pod) []labels.Selector {
	if h.Services == nil {
		return nil
	}
	var out []labels.Selector
	for _, svc := range h.Services.List(pod.Namespace) {
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		if sel := labels.SelectorFromSet(svc.Spec.Selector); sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, sel)
		}
	}
	return out
}

// NamespaceLabels returns the labels of namespace name, nil if it is
// unknown (Kubernetes' GetNamespaceLabelsSnapshot).
func (h Handle) NamespaceLabels(name string) labels.Set {
	if h.Namespaces == nil {
		return nil
	}
	if ns, ok := h.Namespaces.Get(name); ok {
		return labels.Set(ns.Labels)
	}
	return nil
}
