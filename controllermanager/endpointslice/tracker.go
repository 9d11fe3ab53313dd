package endpointslice

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// trackerTTL: if the cache has still not shown our own creates or deletes
// after this long (an event lost in a relist, say), stop waiting and
// trust it again. The ReplicaSet controller's expectations wait as long.
const trackerTTL = 5 * time.Minute

// tracker remembers, per Service, the slices this controller has created
// or deleted that its informer's cache does not show yet. Until it does,
// the cache is known to be behind, and a sync on it would create the
// same endpoints a second time. Kubernetes' EndpointSliceTracker does
// this with metadata.generation; creates and deletes are enough here,
// since an update sent on a stale copy fails as a Conflict by itself.
type tracker struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	items map[string]*pending // by Service key
}

// pending are one Service's writes not yet seen, by slice key.
type pending struct {
	created, deleted sets.Set[string]
	since            time.Time
}

func newTracker(clk clock.PassiveClock) *tracker {
	return &tracker{clock: clk, items: map[string]*pending{}}
}

// expect records a sync's creates and deletes of the Service's slices.
func (t *tracker) expect(service string, created, deleted []string) {
	if len(created)+len(deleted) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.items[service]
	if p == nil {
		p = &pending{created: sets.New[string](), deleted: sets.New[string]()}
		t.items[service] = p
	}
	p.created.Insert(created...)
	p.deleted.Insert(deleted...)
	p.since = t.clock.Now()
}

// deletedSlice: a slice of the Service is gone, whoever deleted it; if we
// had created it, its creation will not show in the cache any more.
func (t *tracker) deletedSlice(service, slice string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.items[service]; p != nil {
		p.created.Delete(slice)
	}
}

// behind reports whether the cache, asked through cached, still lacks
// one of the Service's created slices or still holds a deleted one (one
// it shows as terminating, held by a finalizer, counts as deleted), and
// how long until the tracker gives up waiting. What the cache shows is
// forgotten.
func (t *tracker) behind(service string, cached func(slice string) (present, terminating bool)) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.items[service]
	if p == nil {
		return false, 0
	}
	for k := range p.created {
		if present, _ := cached(k); present {
			p.created.Delete(k)
		}
	}
	for k := range p.deleted {
		if present, terminating := cached(k); !present || terminating {
			p.deleted.Delete(k)
		}
	}
	left := trackerTTL - t.clock.Since(p.since)
	if p.created.Len()+p.deleted.Len() == 0 || left <= 0 {
		delete(t.items, service)
		return false, 0
	}
	return true, left
}

// forget drops a deleted Service.
func (t *tracker) forget(service string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.items, service)
}
