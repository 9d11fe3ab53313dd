package node

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Graph is what the Node authorizer knows of the cluster: which node
// reaches which object. Kubernetes keeps a graph of vertices and edges
// and searches it from the object to the node:
//
//	secret → pod → node
//	secret → pv → pvc → pod → node
//
// mkube keeps the same relation as counts, so that a question is a few
// map lookups and no search: for each object the bound pods refer to,
// how many pods of each node do; for each PersistentVolume, its claim and
// its Secrets. The API server feeds it (Pods, PersistentVolumes) from its
// watch cache; the objects are read, never kept.
type Graph struct {
	mu   sync.RWMutex // writers: the two feeds; readers: every request of a node
	pods map[types.NamespacedName]boundPod
	// users: object → node → how many of the node's pods refer to it.
	users map[ref]map[string]int
	// volumes are the PersistentVolumes bound to a claim, by name;
	// volumesOf are those naming each Secret.
	volumes   map[string]volume
	volumesOf map[ref]map[string]bool
}

// boundPod is what the graph recorded of a pod bound to a node. A bound
// pod's references are fixed (its spec cannot change them) but for new
// ephemeral containers and the resource claims its status comes to
// name, so those counts say when to read it again.
type boundPod struct {
	node                     string
	uid                      types.UID
	ephemeral, claimStatuses int
	refs                     []ref
}

// volume is a PersistentVolume's claim and kubelet-visible Secrets.
type volume struct {
	claim   ref
	secrets []ref
}

// NewGraph is an empty graph: until it is fed, no node reaches anything.
func NewGraph() *Graph {
	return &Graph{pods: map[types.NamespacedName]boundPod{}, users: map[ref]map[string]int{},
		volumes: map[string]volume{}, volumesOf: map[ref]map[string]bool{}}
}

// podBoundTo: the pod namespace/name is bound to node.
func (g *Graph) podBoundTo(node, namespace, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	p, ok := g.pods[types.NamespacedName{Namespace: namespace, Name: name}]
	return ok && p.node == node
}

// reaches: a pod bound to node refers to r, or, for a Secret, a
// PersistentVolume that names it is bound to a claim such a pod uses.
func (g *Graph) reaches(node string, r ref) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.users[r][node] > 0 {
		return true
	}
	for pv := range g.volumesOf[r] {
		if g.users[g.volumes[pv].claim][node] > 0 {
			return true
		}
	}
	return false
}

// volumeReaches: the PersistentVolume name is bound to a claim a pod of
// node uses.
func (g *Graph) volumeReaches(node, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	v, ok := g.volumes[name]
	return ok && g.users[v.claim][node] > 0
}

// putPod records a pod, or forgets it if it is not bound. Callers hold mu.
func (g *Graph) putPod(pod *corev1.Pod) {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	if g.podUnchanged(pod) {
		return
	}
	g.removePod(key)
	if pod.Spec.NodeName == "" {
		return // not bound: no node reaches anything through it yet
	}
	p := boundPod{node: pod.Spec.NodeName, uid: pod.UID, ephemeral: len(pod.Spec.EphemeralContainers),
		claimStatuses: len(pod.Status.ResourceClaimStatuses), refs: podRefs(pod)}
	g.pods[key] = p
	for _, r := range p.refs {
		if g.users[r] == nil {
			g.users[r] = map[string]int{}
		}
		g.users[r][p.node]++
	}
}

// podUnchanged: the graph has the pod as it is, as after most updates (a
// status change), which need not be read again. Callers hold mu, read or
// write.
func (g *Graph) podUnchanged(pod *corev1.Pod) bool {
	old, had := g.pods[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]
	return had && old.node == pod.Spec.NodeName && old.uid == pod.UID &&
		old.ephemeral == len(pod.Spec.EphemeralContainers) && old.claimStatuses == len(pod.Status.ResourceClaimStatuses)
}

// removePod forgets a pod and what its node reached through it. Callers
// hold mu.
func (g *Graph) removePod(key types.NamespacedName) {
	p, ok := g.pods[key]
	if !ok {
		return
	}
	delete(g.pods, key)
	for _, r := range p.refs {
		byNode := g.users[r]
		if byNode[p.node]--; byNode[p.node] <= 0 {
			delete(byNode, p.node)
		}
		if len(byNode) == 0 {
			delete(g.users, r)
		}
	}
}

// putVolume records a PersistentVolume, replacing what it said before;
// one bound to no claim leads no node anywhere. Callers hold mu.
func (g *Graph) putVolume(pv *corev1.PersistentVolume) {
	g.removeVolume(pv.Name)
	if pv.Spec.ClaimRef == nil {
		return
	}
	v := volume{claim: ref{claimKind, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name}, secrets: volumeSecrets(pv)}
	g.volumes[pv.Name] = v
	for _, s := range v.secrets {
		if g.volumesOf[s] == nil {
			g.volumesOf[s] = map[string]bool{}
		}
		g.volumesOf[s][pv.Name] = true
	}
}

// removeVolume forgets a PersistentVolume. Callers hold mu.
func (g *Graph) removeVolume(name string) {
	v, ok := g.volumes[name]
	if !ok {
		return
	}
	delete(g.volumes, name)
	for _, s := range v.secrets {
		delete(g.volumesOf[s], name)
		if len(g.volumesOf[s]) == 0 {
			delete(g.volumesOf, s)
		}
	}
}

// Feed takes one kind's objects into the graph: what the API server's
// Follow calls (apiserver.Follower), for pods and PersistentVolumes.
type Feed struct {
	g     *Graph
	clear func(g *Graph)
	put   func(g *Graph, obj runtime.Object)
	drop  func(g *Graph, obj runtime.Object)
	// unchanged, if set, says under the read lock that an update changes
	// nothing, so that the pods' many status updates do not make the
	// nodes' requests wait for the write lock.
	unchanged func(g *Graph, obj runtime.Object) bool
}

// Pods is the feed of pods: the pods bound to each node, and what they
// refer to.
func (g *Graph) Pods() Feed {
	return Feed{g: g,
		clear:     func(g *Graph) { clear(g.pods); clear(g.users) },
		put:       func(g *Graph, obj runtime.Object) { g.putPod(obj.(*corev1.Pod)) },
		unchanged: func(g *Graph, obj runtime.Object) bool { return g.podUnchanged(obj.(*corev1.Pod)) },
		drop: func(g *Graph, obj runtime.Object) {
			g.removePod(types.NamespacedName{Namespace: obj.(*corev1.Pod).Namespace, Name: obj.(*corev1.Pod).Name})
		}}
}

// PersistentVolumes is the feed of PersistentVolumes: their claims and
// Secrets.
func (g *Graph) PersistentVolumes() Feed {
	return Feed{g: g,
		clear: func(g *Graph) { clear(g.volumes); clear(g.volumesOf) },
		put:   func(g *Graph, obj runtime.Object) { g.putVolume(obj.(*corev1.PersistentVolume)) },
		drop:  func(g *Graph, obj runtime.Object) { g.removeVolume(obj.(*corev1.PersistentVolume).Name) }}
}

// Replace makes objs the kind's whole set: at the start, and again if the
// feed fell behind the watch cache and had to list.
func (f Feed) Replace(objs []runtime.Object) {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	f.clear(f.g)
	for _, obj := range objs {
		f.put(f.g, obj)
	}
}

// Update applies one change: obj is nil for a deletion, prev nil for a
// creation.
func (f Feed) Update(obj, prev runtime.Object) {
	if obj != nil && f.unchanged != nil {
		f.g.mu.RLock()
		same := f.unchanged(f.g, obj)
		f.g.mu.RUnlock()
		if same {
			return
		}
	}
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	if obj == nil {
		f.drop(f.g, prev)
		return
	}
	f.put(f.g, obj)
}
