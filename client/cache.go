package client

import (
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// IndexFunc returns the index values of an object, e.g. the node a pod runs on.
type IndexFunc func(obj runtime.Object) []string

// IndexPodsByNode indexes pods by spec.nodeName: how the kubelet and the
// scheduler find the pods of one node without a scan.
const IndexPodsByNode = "spec.nodeName"

// PodNodeIndex is the IndexFunc for IndexPodsByNode.
func PodNodeIndex(obj runtime.Object) []string {
	if pod, ok := obj.(*corev1.Pod); ok {
		return []string{pod.Spec.NodeName}
	}
	return nil
}

// IndexByNamespace indexes objects by their namespace.
const IndexByNamespace = "namespace"

// NamespaceIndex is the IndexFunc for IndexByNamespace.
func NamespaceIndex(obj runtime.Object) []string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return []string{m.GetNamespace()}
}

// Cache is an informer's local copy of the server's objects, keyed by
// "namespace/name" (or "name" when cluster-scoped) and optionally indexed.
//
// Objects in the cache are shared with every reader: never modify one,
// DeepCopy it first.
type Cache struct {
	mu       sync.RWMutex
	items    map[string]runtime.Object
	indexers map[string]IndexFunc
	indices  map[string]map[string]map[string]struct{} // index → value → keys
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{items: map[string]runtime.Object{}, indexers: map[string]IndexFunc{}, indices: map[string]map[string]map[string]struct{}{}}
}

// KeyOf is the cache key of an object: "namespace/name", or "name".
func KeyOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// AddIndex adds an index; call it before the cache fills.
func (c *Cache) AddIndex(name string, fn IndexFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.indexers[name] = fn
	c.indices[name] = map[string]map[string]struct{}{}
	for key, obj := range c.items {
		c.index(name, key, obj)
	}
}

// Get returns the object with this key.
func (c *Cache) Get(key string) (runtime.Object, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	obj, ok := c.items[key]
	return obj, ok
}

// List returns every object, sorted by key.
func (c *Cache) List() []runtime.Object {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]string, 0, len(c.items))
	for k := range c.items {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]runtime.Object, len(keys))
	for i, k := range keys {
		out[i] = c.items[k]
	}
	return out
}

// Len is the number of objects.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.items)
}

// ByIndex returns the objects whose index value is value, sorted by key.
func (c *Cache) ByIndex(index, value string) []runtime.Object {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]string, 0, len(c.indices[index][value]))
	for k := range c.indices[index][value] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]runtime.Object, len(keys))
	for i, k := range keys {
		out[i] = c.items[k]
	}
	return out
}

// set stores obj and returns what it replaced.
func (c *Cache) set(obj runtime.Object) (old runtime.Object, existed bool) {
	key := KeyOf(obj)
	c.mu.Lock()
	defer c.mu.Unlock()
	old, existed = c.items[key]
	if existed {
		c.unindex(key, old)
	}
	c.items[key] = obj
	for name := range c.indexers {
		c.index(name, key, obj)
	}
	return old, existed
}

// remove deletes the key and returns what was there.
func (c *Cache) remove(key string) (runtime.Object, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.items[key]
	if ok {
		c.unindex(key, old)
		delete(c.items, key)
	}
	return old, ok
}

// keys returns a snapshot of the keys.
func (c *Cache) keys() map[string]struct{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]struct{}, len(c.items))
	for k := range c.items {
		out[k] = struct{}{}
	}
	return out
}

func (c *Cache) index(name, key string, obj runtime.Object) {
	for _, v := range c.indexers[name](obj) {
		set := c.indices[name][v]
		if set == nil {
			set = map[string]struct{}{}
			c.indices[name][v] = set
		}
		set[key] = struct{}{}
	}
}

func (c *Cache) unindex(key string, obj runtime.Object) {
	for name, fn := range c.indexers {
		for _, v := range fn(obj) {
			delete(c.indices[name][v], key)
			if len(c.indices[name][v]) == 0 {
				delete(c.indices[name], v)
			}
		}
	}
}

// IndexByOwnerUID indexes objects by the UIDs of their owners: how a
// controller finds its pods, and the garbage collector an owner's dependents.
const IndexByOwnerUID = "ownerUID"

// OwnerUIDIndex is the IndexFunc for IndexByOwnerUID.
func OwnerUIDIndex(obj runtime.Object) []string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	refs := m.GetOwnerReferences()
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = string(r.UID)
	}
	return out
}
