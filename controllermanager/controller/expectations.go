package controller

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ExpectationsTTL: if the watch events of a controller's own creates or
// deletes have not all arrived after this long (a lost event, a failed
// create it did not see fail), it stops waiting and trusts the cache
// again. Kubernetes' ExpectationsTimeout is the same 5 minutes.
const ExpectationsTTL = 5 * time.Minute

// Expectations remember, per owner (a ReplicaSet, a DaemonSet), the pod
// creations and deletions its controller has sent but not yet seen come
// back through the pod informer: Kubernetes' ControllerExpectations.
// While any are outstanding the cache is behind the controller's own
// writes, and acting on it would create (or delete) the same pods twice.
//
// Creations are counted (the server names the pods, so they cannot be
// known in advance); deletions are tracked by pod key, so that a late
// event of an earlier deletion, or the two events of one graceful
// deletion (deletionTimestamp set, then gone), never count twice.
type Expectations struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	items map[string]*expectation // by owner key
}

type expectation struct {
	adds  int
	dels  map[string]struct{}
	since time.Time
}

func NewExpectations(clk clock.PassiveClock) *Expectations {
	return &Expectations{clock: clk, items: map[string]*expectation{}}
}

// Expect records that adds creations and the deletions of these pods are
// in flight for key; it replaces what was expected before (which was
// satisfied, or the sync would not be acting).
func (e *Expectations) Expect(key string, adds int, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{adds: adds, dels: map[string]struct{}{}, since: e.clock.Now()}
	for _, k := range podKeys {
		x.dels[k] = struct{}{}
	}
	e.items[key] = x
}

// ExpectCreations records that adds pod creations are in flight.
func (e *Expectations) ExpectCreations(key string, adds int) { e.Expect(key, adds, nil) }

// ExpectDeletions records that the deletions of these pods are in flight.
func (e *Expectations) ExpectDeletions(key string, podKeys []string) { e.Expect(key, 0, podKeys) }

// CreationObserved: one of key's creates came back, failed, or was never sent.
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.items[key]; ok {
		x.adds--
	}
}

// DeletionObserved: the deletion of podKey came back, or failed.
func (e *Expectations) DeletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.items[key]; ok {
		delete(x.dels, podKey)
	}
}

// Satisfied reports whether the cache can be trusted for key.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.items[key]
	if !ok {
		return true
	}
	return (x.adds <= 0 && len(x.dels) == 0) || e.clock.Since(x.since) > ExpectationsTTL
}

// Forget drops key's expectations, when its owner is gone, so a new one
// of the same name starts clean.
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.items, key)
}
