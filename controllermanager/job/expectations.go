package job

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// expectationsTTL: when the watch events of our own creates or deletes
// have not all arrived after this long (a lost event), trust the cache
// again. Kubernetes uses the same 5 minutes.
const expectationsTTL = 5 * time.Minute

// expectations remember, per Job, how many pod creations and deletions
// the controller has sent and not yet seen come back through the pod
// informer. While any are outstanding the cache is behind, and acting on
// it would create, or delete, the same pods twice.
type expectations struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	items map[string]*expected
}

type expected struct {
	adds, dels int
	since      time.Time
}

func newExpectations(clk clock.PassiveClock) *expectations {
	return &expectations{clock: clk, items: map[string]*expected{}}
}

// expect records adds creations, or dels deletions, in flight; it
// replaces what was expected before, which satisfied said was done.
func (e *expectations) expect(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.items[key] = &expected{adds: adds, dels: dels, since: e.clock.Now()}
}

// creationObserved: one of our pods came back, or its creation failed.
func (e *expectations) creationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.items[key]; ok {
		x.adds--
	}
}

// deletionObserved: a pod of the Job went, or began to go.
func (e *expectations) deletionObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.items[key]; ok {
		x.dels--
	}
}

// satisfied reports whether the cache can be trusted for key.
func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.items[key]
	return !ok || (x.adds <= 0 && x.dels <= 0) || e.clock.Since(x.since) > expectationsTTL
}

func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.items, key)
}

// uidSets remember, per Job, the pods whose tracking finalizer the
// controller removed and whose update has not come back yet: until it
// does, the cache still shows the finalizer, and the pod would be counted
// a second time.
type uidSets struct {
	mu   sync.Mutex
	sets map[string]map[types.UID]bool
}

func newUIDSets() *uidSets { return &uidSets{sets: map[string]map[types.UID]bool{}} }

func (u *uidSets) add(key string, uids ...types.UID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.sets[key] == nil {
		u.sets[key] = map[types.UID]bool{}
	}
	for _, uid := range uids {
		u.sets[key][uid] = true
	}
}

func (u *uidSets) remove(key string, uid types.UID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.sets[key], uid)
}

// get returns a copy of key's set.
func (u *uidSets) get(key string) map[types.UID]bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[types.UID]bool, len(u.sets[key]))
	for uid := range u.sets[key] {
		out[uid] = true
	}
	return out
}

func (u *uidSets) forget(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.sets, key)
}
