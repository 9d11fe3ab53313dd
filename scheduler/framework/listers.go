package framework

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
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

// Handle is what the scheduler lends the plugins it builds (Kubernetes'
// framework.Handle, reduced to what mkube's plugins use).
type Handle struct {
	// Namespaces may be nil (tests): every namespace then looks unlabelled.
	Namespaces NamespaceLister
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
