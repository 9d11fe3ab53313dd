package framework

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// PodInfo is a pod with what the scheduler computes from it once, not once
// per node: its key, its requests and its parsed inter-pod affinity terms.
// Pods bound to nodes have one too (NodeInfo.Pods), so matching an
// incoming pod against an existing pod's anti-affinity parses nothing.
type PodInfo struct {
	Pod *corev1.Pod // shared with the informer's cache: never modify it
	Key string      // "namespace/name"
	// Requests is PodRequests(Pod): what NodeResourcesFit compares with a
	// node's free allocatable.
	Requests Resource
	// NonZeroRequests is NonZeroPodRequests(Pod): what scoring counts.
	NonZeroRequests Resource
	// Priority is PodPriority(Pod), kept here because preemption compares
	// it for every pod of every node it looks at.
	Priority int32

	// The terms of spec.affinity.podAffinity and podAntiAffinity, parsed
	// (see AffinityTerm); used by the InterPodAffinity plugin.
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// ParseError is set when a term's selector did not parse; that term is
	// left out. InterPodAffinity refuses to schedule such a pod.
	ParseError error
}

// NewPodInfo computes the PodInfo of pod.
func NewPodInfo(pod *corev1.Pod) *PodInfo {
	terms, err := parseAffinityTerms(pod)
	return &PodInfo{
		Pod: pod, Key: PodKey(pod), Requests: PodRequests(pod), NonZeroRequests: NonZeroPodRequests(pod), Priority: PodPriority(pod),
		RequiredAffinityTerms:      terms.requiredAffinity,
		RequiredAntiAffinityTerms:  terms.requiredAntiAffinity,
		PreferredAffinityTerms:     terms.preferredAffinity,
		PreferredAntiAffinityTerms: terms.preferredAntiAffinity,
		ParseError:                 err,
	}
}

// HasAffinityTerms reports whether the pod has any inter-pod affinity or
// anti-affinity term, required or preferred.
func (p *PodInfo) HasAffinityTerms() bool {
	return len(p.RequiredAffinityTerms)+len(p.RequiredAntiAffinityTerms)+len(p.PreferredAffinityTerms)+len(p.PreferredAntiAffinityTerms) > 0
}

// PodKey is "namespace/name", the key of a pod in the queue, the cache,
// the logs and the informer.
func PodKey(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// QueuedPodInfo is a pod waiting in the scheduling queue, with its history
// there.
type QueuedPodInfo struct {
	*PodInfo
	// Timestamp is when the pod was last added to the queue. It orders
	// pods of equal priority (first come, first served), and the pod's
	// backoff counts from it.
	Timestamp time.Time
	// InitialAttemptTimestamp is when the pod was first taken from the
	// queue; nil until then.
	InitialAttemptTimestamp *time.Time
	// Attempts is how many times the pod has been taken from the queue.
	Attempts int
	// UnschedulablePlugins are the plugins that rejected the pod in its
	// last attempt: only a cluster event one of them registered for can
	// make it schedulable, so only such an event moves it back to the
	// active queue. Empty means "any event", e.g. when there were no nodes.
	UnschedulablePlugins sets.Set[string]
	// Preempted is the last preemption this pod made (the node it was
	// nominated to, the victims), nil if none: the explanation of its
	// eventual binding tells it.
	Preempted *Candidate
}

// PodPriority is spec.priority, which the API server's Priority admission
// sets from spec.priorityClassName when the pod is created; 0 if unset.
func PodPriority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// NodeInfo is what the scheduler knows of one node: the Node, the pods
// bound or assumed there, and what filters and scores need from them,
// kept up to date by the cache as pods come and go, so that a filter
// compares one pod with one node in constant time.
type NodeInfo struct {
	node *corev1.Node
	// Pods are the pods bound (spec.nodeName) or assumed on the node.
	Pods []*PodInfo
	// PodsWithAffinity are the Pods with any inter-pod affinity or
	// anti-affinity term; PodsWithRequiredAntiAffinity those with a
	// required anti-affinity term. InterPodAffinity looks only at these
	// when the incoming pod has no terms of its own.
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo
	// UsedPorts are the host ports the Pods hold (NodePorts).
	UsedPorts HostPortInfo
	// Requested is the sum of Pods' Requests.
	Requested Resource
	// NonZeroRequested is the sum of Pods' NonZeroRequests.
	NonZeroRequested Resource
	// Allocatable is node.status.allocatable: capacity minus what the
	// kubelet reserves for the system.
	Allocatable Resource
	// ImageSizes are the images the kubelet reports present on the node
	// (node.status.images), by each of their names, with their size in
	// bytes (ImageLocality). Rebuilt whenever the node is; never changed in
	// place, so clones share it.
	ImageSizes map[string]int64
	// Generation increases on every change; the cache copies a NodeInfo
	// into the scheduling snapshot only when it has changed since.
	Generation int64
	// podsByLabel indexes Pods by label; see PodsWithLabel.
	podsByLabel map[labelPair][]*PodInfo
}

// labelPair is one label, key=value.
type labelPair struct{ key, value string }

// PodsWithLabel returns the pods on the node labelled key=value, so that
// InterPodAffinity finds the pods a term such as app In [myapp-demo]
// selects without testing every pod of the cluster against it.
//
// The index is built on first use, O(pods on the node), and kept while the
// node's pods do not change; any change drops it. The snapshot gives each
// cycle a NodeInfo that only the scheduling goroutine reads, and a node
// whose pods did not change keeps its NodeInfo, so in a big cluster the
// indexes are built once and then reused, cycle after cycle. It must not
// be called concurrently for one NodeInfo.
func (n *NodeInfo) PodsWithLabel(key, value string) []*PodInfo {
	if n.podsByLabel == nil {
		n.podsByLabel = make(map[labelPair][]*PodInfo, len(n.Pods))
		for _, p := range n.Pods {
			for k, v := range p.Pod.Labels {
				lp := labelPair{k, v}
				n.podsByLabel[lp] = append(n.podsByLabel[lp], p)
			}
		}
	}
	return n.podsByLabel[labelPair{key, value}]
}

// NewNodeInfo returns an empty NodeInfo, without a Node yet.
func NewNodeInfo() *NodeInfo { return &NodeInfo{} }

// Node is the node object, or nil if only pods bound to it are known so
// far (its watch event has not arrived yet, or it was deleted while pods
// still named it).
func (n *NodeInfo) Node() *corev1.Node { return n.node }

// SetNode sets or replaces the node object.
func (n *NodeInfo) SetNode(node *corev1.Node) {
	n.node = node
	n.Allocatable = NewResource(node.Status.Allocatable)
	n.ImageSizes = nil
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if n.ImageSizes == nil {
				n.ImageSizes = make(map[string]int64, len(node.Status.Images))
			}
			n.ImageSizes[name] = img.SizeBytes
		}
	}
}

// RemoveNode forgets the node object but keeps its pods.
func (n *NodeInfo) RemoveNode() {
	n.node = nil
	n.Allocatable = Resource{}
	n.ImageSizes = nil
}

// AddPodInfo counts a pod on the node.
func (n *NodeInfo) AddPodInfo(p *PodInfo) {
	n.Pods = append(n.Pods, p)
	n.podsByLabel = nil
	if p.HasAffinityTerms() {
		n.PodsWithAffinity = append(n.PodsWithAffinity, p)
	}
	if len(p.RequiredAntiAffinityTerms) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, p)
	}
	for _, port := range HostPorts(p.Pod) {
		if n.UsedPorts == nil {
			n.UsedPorts = HostPortInfo{}
		}
		n.UsedPorts.Add(port.HostIP, string(port.Protocol), port.HostPort)
	}
	n.Requested.Add(p.Requests)
	n.NonZeroRequested.MilliCPU += p.NonZeroRequests.MilliCPU
	n.NonZeroRequested.Memory += p.NonZeroRequests.Memory
}

// RemovePod un-counts the pod with this key; false if it was not there.
func (n *NodeInfo) RemovePod(key string) bool {
	p, ok := removeByKey(&n.Pods, key)
	if !ok {
		return false
	}
	n.podsByLabel = nil
	removeByKey(&n.PodsWithAffinity, key)
	removeByKey(&n.PodsWithRequiredAntiAffinity, key)
	for _, port := range HostPorts(p.Pod) {
		n.UsedPorts.Remove(port.HostIP, string(port.Protocol), port.HostPort)
	}
	n.Requested.Sub(p.Requests)
	n.NonZeroRequested.MilliCPU -= p.NonZeroRequests.MilliCPU
	n.NonZeroRequested.Memory -= p.NonZeroRequests.Memory
	return true
}

// removeByKey removes the pod with key from *pods (order is not kept).
func removeByKey(pods *[]*PodInfo, key string) (*PodInfo, bool) {
	s := *pods
	for i, p := range s {
		if p.Key != key {
			continue
		}
		last := len(s) - 1
		s[i] = s[last]
		s[last] = nil
		*pods = s[:last]
		return p, true
	}
	return nil, false
}

// Clone returns a copy whose pod lists, ports and sums can change
// independently. The label index is not copied: the clone builds its own
// if it is asked.
func (n *NodeInfo) Clone() *NodeInfo {
	return &NodeInfo{
		node:                         n.node,
		Pods:                         append([]*PodInfo(nil), n.Pods...),
		PodsWithAffinity:             cloneList(n.PodsWithAffinity),
		PodsWithRequiredAntiAffinity: cloneList(n.PodsWithRequiredAntiAffinity),
		UsedPorts:                    n.UsedPorts.Clone(),
		Requested:                    n.Requested.Clone(),
		NonZeroRequested:             n.NonZeroRequested.Clone(),
		Allocatable:                  n.Allocatable.Clone(),
		ImageSizes:                   n.ImageSizes,
		Generation:                   n.Generation,
	}
}

// cloneList copies a pod list; an empty list stays nil, so that the
// common node, without pods with affinity, costs no allocation.
func cloneList(pods []*PodInfo) []*PodInfo {
	if len(pods) == 0 {
		return nil
	}
	return append([]*PodInfo(nil), pods...)
}
