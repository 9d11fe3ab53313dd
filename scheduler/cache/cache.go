// Package cache is the scheduler's picture of the cluster: every node with
// the pods bound or assumed there and the sums of their requests
// (framework.NodeInfo), updated incrementally from the informers.
//
// Assume: as soon as the scheduler picks a node for a pod it assumes the
// pod is there, before the binding (seed step 10) has reached the API
// server. The next pod then already sees those resources taken, so two
// pods are not both sent to the last free cpu. When the binding lands, the
// pod informer reports the pod bound and AddPod confirms the assumption;
// if the binding fails, ForgetPod takes it back.
//
// Snapshot: a scheduling cycle reads a Snapshot, a private copy that the
// informers cannot change under it. UpdateSnapshot copies only the nodes
// that changed since the last cycle: the cache keeps its nodes in a list,
// most recently changed first, each stamped with a generation number, and
// stops at the first node the snapshot already has. A cycle costs
// O(changed nodes), not O(pods).
//
// Besides the nodes, the snapshot holds what some plugins need about the
// whole cluster, maintained as cheaply: the nodes holding pods with
// inter-pod affinity (InterPodAffinity), and how many nodes hold each
// image (ImageLocality), which the cache counts as nodes come and go.
//
// Where things live:
//
//	file         what it holds
//	cache.go     the Cache: nodes and their pods, AssumePod, ForgetPod, AddPod/UpdatePod/RemovePod, AddNode/UpdateNode/RemoveNode, the list of nodes most recently changed first
//	snapshot.go  the Snapshot a cycle reads (nodes by name, the nodes with affinity pods, image spread) and UpdateSnapshot
package cache

import (
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/mkube/mkube/scheduler/framework"
)

// Cache is safe for concurrent use: informer handlers, the scheduling loop
// and binding goroutines all call it.
type Cache struct {
	mu sync.RWMutex
	// nodes holds every node known from the node informer, and also nodes
	// only known because bound pods name them (their Node() is nil).
	nodes map[string]*nodeInfoListItem
	// headNode is the most recently changed node; the list continues in
	// order of decreasing generation.
	headNode *nodeInfoListItem
	// nodeCount is the number of nodes whose Node object is known.
	nodeCount int
	// podStates are the pods counted on some node, bound or assumed.
	podStates map[string]*framework.PodInfo
	// assumedPods are the pods whose binding has not been confirmed yet.
	assumedPods sets.Set[string]
	generation  int64
	// imageNodes counts, for each image name, the nodes reporting it in
	// status.images; imageGeneration increases when a count changes.
	imageNodes      map[string]int
	imageGeneration int64
}

type nodeInfoListItem struct {
	name       string
	info       *framework.NodeInfo
	next, prev *nodeInfoListItem
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{nodes: map[string]*nodeInfoListItem{}, podStates: map[string]*framework.PodInfo{}, assumedPods: sets.New[string](),
		imageNodes: map[string]int{}}
}

// AssumePod counts pod (with spec.nodeName set to the chosen node) on its
// node before the binding is confirmed.
func (c *Cache) AssumePod(pod *framework.PodInfo) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.podStates[pod.Key]; ok {
		return fmt.Errorf("pod %s is already in the cache, so it can't be assumed", pod.Key)
	}
	c.addPodLocked(pod)
	c.assumedPods.Insert(pod.Key)
	return nil
}

// ForgetPod takes back an assumption whose binding failed.
func (c *Cache) ForgetPod(pod *corev1.Pod) error {
	key := framework.PodKey(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.podStates[key]
	if !ok || !c.assumedPods.Has(key) {
		return fmt.Errorf("pod %s wasn't assumed, so it can't be forgotten", key)
	}
	if cur.Pod.Spec.NodeName != pod.Spec.NodeName {
		return fmt.Errorf("pod %s was assumed on %s but asked to forget it on %s", key, cur.Pod.Spec.NodeName, pod.Spec.NodeName)
	}
	c.removePodLocked(cur)
	c.assumedPods.Delete(key)
	return nil
}

// IsAssumedPod reports whether pod is assumed and not yet confirmed.
func (c *Cache) IsAssumedPod(pod *corev1.Pod) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.assumedPods.Has(framework.PodKey(pod))
}

// AddPod counts a bound pod seen by the informer. If the pod was assumed,
// this is the confirmation that its binding landed: the informer's object
// replaces the assumed copy.
func (c *Cache) AddPod(pod *corev1.Pod) error {
	pi := framework.NewPodInfo(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.podStates[pi.Key]
	switch {
	case ok && c.assumedPods.Has(pi.Key):
		c.removePodLocked(cur)
		c.addPodLocked(pi)
		c.assumedPods.Delete(pi.Key)
	case ok:
		return fmt.Errorf("pod %s was already added", pi.Key)
	default:
		c.addPodLocked(pi)
	}
	return nil
}

// UpdatePod replaces a bound pod's old version with its new one (its
// requests may have changed, or it may have been confirmed).
func (c *Cache) UpdatePod(oldPod, newPod *corev1.Pod) error {
	pi := framework.NewPodInfo(newPod)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.podStates[pi.Key]; ok {
		c.removePodLocked(cur)
	}
	c.addPodLocked(pi)
	c.assumedPods.Delete(pi.Key)
	return nil
}

// RemovePod un-counts a pod that was deleted or finished.
func (c *Cache) RemovePod(pod *corev1.Pod) error {
	key := framework.PodKey(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.podStates[key]
	if !ok {
		return fmt.Errorf("pod %s is not in the cache", key)
	}
	c.removePodLocked(cur)
	c.assumedPods.Delete(key)
	return nil
}

func (c *Cache) addPodLocked(pi *framework.PodInfo) {
	item := c.nodes[pi.Pod.Spec.NodeName]
	if item == nil {
		// The pod informer may report a pod before the node informer
		// reports its node.
		item = &nodeInfoListItem{name: pi.Pod.Spec.NodeName, info: framework.NewNodeInfo()}
		c.nodes[item.name] = item
	}
	item.info.AddPodInfo(pi)
	c.podStates[pi.Key] = pi
	c.touch(item)
}

func (c *Cache) removePodLocked(pi *framework.PodInfo) {
	delete(c.podStates, pi.Key)
	item := c.nodes[pi.Pod.Spec.NodeName]
	if item == nil {
		return
	}
	item.info.RemovePod(pi.Key)
	if len(item.info.Pods) == 0 && item.info.Node() == nil {
		c.unlink(item) // a node deleted earlier has lost its last pod
		return
	}
	c.touch(item)
}

// AddNode records a node.
func (c *Cache) AddNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	item := c.nodes[node.Name]
	if item == nil {
		item = &nodeInfoListItem{name: node.Name, info: framework.NewNodeInfo()}
		c.nodes[node.Name] = item
	}
	if item.info.Node() == nil {
		c.nodeCount++
	}
	oldImages := item.info.ImageSizes
	item.info.SetNode(node)
	if !maps.Equal(oldImages, item.info.ImageSizes) {
		c.countImages(oldImages, -1)
		c.countImages(item.info.ImageSizes, +1)
	}
	c.touch(item)
}

// countImages adds delta to the node count of every image in images.
func (c *Cache) countImages(images map[string]int64, delta int) {
	if len(images) == 0 {
		return
	}
	for name := range images {
		c.imageNodes[name] += delta
		if c.imageNodes[name] <= 0 {
			delete(c.imageNodes, name)
		}
	}
	c.imageGeneration++
}

// UpdateNode records a node's new version.
func (c *Cache) UpdateNode(_, newNode *corev1.Node) { c.AddNode(newNode) }

// RemoveNode forgets a node. Its pods stay counted until they are deleted
// too (Kubernetes' pod garbage collector deletes them).
func (c *Cache) RemoveNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	item := c.nodes[node.Name]
	if item == nil || item.info.Node() == nil {
		return
	}
	c.nodeCount--
	c.countImages(item.info.ImageSizes, -1)
	if len(item.info.Pods) == 0 {
		c.unlink(item)
		return
	}
	item.info.RemoveNode()
	c.touch(item)
}

// touch stamps item with a new generation and moves it to the head of the
// list, keeping the list in order of decreasing generation.
func (c *Cache) touch(item *nodeInfoListItem) {
	c.generation++
	item.info.Generation = c.generation
	if c.headNode == item {
		return
	}
	c.detach(item)
	item.next = c.headNode
	if c.headNode != nil {
		c.headNode.prev = item
	}
	c.headNode = item
}

// unlink removes item from the cache altogether.
func (c *Cache) unlink(item *nodeInfoListItem) {
	c.detach(item)
	delete(c.nodes, item.name)
}

func (c *Cache) detach(item *nodeInfoListItem) {
	if item.prev != nil {
		item.prev.next = item.next
	}
	if item.next != nil {
		item.next.prev = item.prev
	}
	if c.headNode == item {
		c.headNode = item.next
	}
	item.prev, item.next = nil, nil
}

// NodeCount is the number of nodes known from the node informer.
func (c *Cache) NodeCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.nodeCount
}

// PodCount is the number of pods counted on nodes, bound or assumed.
func (c *Cache) PodCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.podStates)
}
