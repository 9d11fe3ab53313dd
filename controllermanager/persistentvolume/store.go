package persistentvolume

import (
	"maps"
	"slices"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
)

// object is a claim or a volume.
type object interface {
	runtime.Object
	metav1.Object
}

// store is the controller's own view of the claims or the volumes: what
// the informer delivered, and what the controller itself wrote, kept as
// soon as the API server answered. Binding writes a volume and a claim
// twice each; without this, the next sync would read the informer's older
// copies and try to bind them again, only to lose on a conflict (Kubernetes
// keeps the same caches, for the same reason). An update never replaces a
// newer object with an older one.
//
// The objects are shared: copy before changing one.
type store[T object] struct {
	mu   sync.RWMutex
	objs map[string]T // by client.KeyOf
}

func newStore[T object]() *store[T] { return &store[T]{objs: map[string]T{}} }

func (s *store[T]) get(key string) (T, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj, ok := s.objs[key]
	return obj, ok
}

// list returns every object, in key order so that a sync over all of them
// is deterministic.
func (s *store[T]) list() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, len(s.objs))
	for _, key := range slices.Sorted(maps.Keys(s.objs)) {
		out = append(out, s.objs[key])
	}
	return out
}

// update keeps obj unless the store has a newer version of it, and
// reports whether it did.
func (s *store[T]) update(obj T) bool {
	key := client.KeyOf(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	if have, ok := s.objs[key]; ok && have.GetUID() == obj.GetUID() && revision(have) > revision(obj) {
		return false
	}
	s.objs[key] = obj
	return true
}

func (s *store[T]) remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, key)
}

// revision is an object's resourceVersion as a number: mkube's are etcd
// revisions. One that is not a number counts as the oldest.
func revision(obj metav1.Object) int64 {
	rv, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return -1
	}
	return rv
}
