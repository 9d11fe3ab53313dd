package statefulset

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// expectationsTTL: a pod write whose watch event has not arrived after
// this long (lost, or failed unseen) is no longer waited for; Kubernetes'
// controllers use the same 5 minutes.
const expectationsTTL = 5 * time.Minute

// expectations remember, per set, the pods the controller has created or
// deleted and the pod cache does not show yet. Until it does, the cache is
// behind the controller's own writes: a plan made from it would create
// web-1 again, or count a deleted pod as running. Kubernetes'
// statefulset controller waits the same way for its informers to reach
// the resourceVersions it wrote (StaleControllerConsistencyStatefulSet).
type expectations struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	items map[string]map[string]expected // set key → pod key → what the cache should show
}

// expected: the pod exists (a create), or this pod (uid) is gone or going
// (a delete).
type expected struct {
	create bool
	uid    types.UID
	since  time.Time
}

func newExpectations(clk clock.PassiveClock) *expectations {
	return &expectations{clock: clk, items: map[string]map[string]expected{}}
}

func (e *expectations) expect(setKey, podKey string, x expected) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.items[setKey] == nil {
		e.items[setKey] = map[string]expected{}
	}
	x.since = e.clock.Now()
	e.items[setKey][podKey] = x
}

// expectCreate: the pod was created; the cache should get it.
func (e *expectations) expectCreate(setKey, podKey string) {
	e.expect(setKey, podKey, expected{create: true})
}

// expectDelete: this pod was deleted; the cache should lose it, or see it
// terminating.
func (e *expectations) expectDelete(setKey, podKey string, uid types.UID) {
	e.expect(setKey, podKey, expected{uid: uid})
}

// pending drops what the cache now shows (or what expired) and returns a
// pod the cache is still behind on, "" if none: then the cache can be
// planned from.
func (e *expectations) pending(setKey string, cached func(podKey string) (*corev1.Pod, bool)) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for podKey, x := range e.items[setKey] {
		pod, ok := cached(podKey)
		seen := x.create == ok
		if !x.create && ok && (pod.UID != x.uid || pod.DeletionTimestamp != nil) {
			seen = true // replaced by a new pod of the name, or terminating
		}
		if seen || e.clock.Since(x.since) > expectationsTTL {
			delete(e.items[setKey], podKey)
			continue
		}
		return podKey
	}
	delete(e.items, setKey)
	return ""
}

// forget drops a set's expectations, when the set is gone.
func (e *expectations) forget(setKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.items, setKey)
}
