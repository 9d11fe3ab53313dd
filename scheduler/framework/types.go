package framework

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// PodInfo is a pod with what the scheduler computes from it once, not once
// per node: its key and its requests.
type PodInfo struct {
	Pod *corev1.Pod // shared with the informer's cache: never modify it
	Key string      // "namespace/name"
	// Requests is PodRequests(Pod): what NodeResourcesFit compares with a
	// node's free allocatable.
	Requests Resource
	// NonZeroRequests is NonZeroPodRequests(Pod): what scoring counts.
	NonZeroRequests Resource
}

// NewPodInfo computes the PodInfo of pod.
func NewPodInfo(pod *corev1.Pod) *PodInfo {
	return &PodInfo{Pod: pod, Key: PodKey(pod), Requests: PodRequests(pod), NonZeroRequests: NonZeroPodRequests(pod)}
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
}

// Priority is the pod's spec.priority (0 if unset): higher goes first.
func (p *QueuedPodInfo) Priority() int32 {
	if p.Pod.Spec.Priority != nil {
		return *p.Pod.Spec.Priority
	}
	return 0
}

// NodeInfo is what the scheduler knows of one node: the Node, the pods
// bound or assumed there, and the sums of their requests. The cache keeps
// the sums up to date as pods come and go, so a filter compares one pod
// with one node in constant time.
type NodeInfo struct {
	node *corev1.Node
	// Pods are the pods bound (spec.nodeName) or assumed on the node.
	Pods []*PodInfo
	// Requested is the sum of Pods' Requests.
	Requested Resource
	// NonZeroRequested is the sum of Pods' NonZeroRequests.
	NonZeroRequested Resource
	// Allocatable is node.status.allocatable: capacity minus what the
	// kubelet reserves for the system.
	Allocatable Resource
	// Generation increases on every change; the cache copies a NodeInfo
	// into the scheduling snapshot only when it has changed since.
	Generation int64
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
}

// RemoveNode forgets the node object but keeps its pods.
func (n *NodeInfo) RemoveNode() {
	n.node = nil
	n.Allocatable = Resource{}
}

// AddPodInfo counts a pod on the node.
func (n *NodeInfo) AddPodInfo(p *PodInfo) {
	n.Pods = append(n.Pods, p)
	n.Requested.Add(p.Requests)
	n.NonZeroRequested.MilliCPU += p.NonZeroRequests.MilliCPU
	n.NonZeroRequested.Memory += p.NonZeroRequests.Memory
}

// RemovePod un-counts the pod with this key; false if it was not there.
func (n *NodeInfo) RemovePod(key string) bool {
	for i, p := range n.Pods {
		if p.Key != key {
			continue
		}
		last := len(n.Pods) - 1
		n.Pods[i] = n.Pods[last]
		n.Pods[last] = nil
		n.Pods = n.Pods[:last]
		n.Requested.Sub(p.Requests)
		n.NonZeroRequested.MilliCPU -= p.NonZeroRequests.MilliCPU
		n.NonZeroRequested.Memory -= p.NonZeroRequests.Memory
		return true
	}
	return false
}

// Clone returns a copy whose pod list and sums can change independently.
func (n *NodeInfo) Clone() *NodeInfo {
	return &NodeInfo{
		node:             n.node,
		Pods:             append([]*PodInfo(nil), n.Pods...),
		Requested:        n.Requested.Clone(),
		NonZeroRequested: n.NonZeroRequested.Clone(),
		Allocatable:      n.Allocatable.Clone(),
		Generation:       n.Generation,
	}
}
