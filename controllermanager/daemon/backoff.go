package daemon

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// A failed daemon pod is deleted and replaced, but a node that keeps
// failing its pod (a kubelet rejecting it: a host port taken, a missing
// resource) would have the controller fight the kubelet in a hot loop. So
// the failed pods of one (DaemonSet, template generation, node) are
// deleted at most once per back-off delay, which doubles from 1s up to
// 15 minutes (Kubernetes' failedPodsBackoff, client-go's flowcontrol.Backoff
// without jitter), and starts afresh after twice the maximum in peace.
const (
	failedPodsBackoffInitial = time.Second
	failedPodsBackoffMax     = 15 * time.Minute
)

// backoff is that per-key delay.
type backoff struct {
	clock   clock.PassiveClock
	mu      sync.Mutex
	entries map[string]backoffEntry
}

type backoffEntry struct {
	delay      time.Duration
	lastUpdate time.Time
}

func newBackoff(clk clock.PassiveClock) *backoff {
	return &backoff{clock: clk, entries: map[string]backoffEntry{}}
}

// inBackoff reports whether key was last acted on less than its delay
// ago, and that delay (when to look again).
func (b *backoff) inBackoff(key string) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	now := b.clock.Now()
	if !ok || b.expired(e, now) {
		return false, 0
	}
	return now.Sub(e.lastUpdate) < e.delay, e.delay
}

// next records an action on key now: the first, or the first after a
// long peace, waits failedPodsBackoffInitial; each next one twice the last.
// Entries long expired are dropped on the way (Kubernetes' GC).
func (b *backoff) next(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	for k, e := range b.entries {
		if b.expired(e, now) {
			delete(b.entries, k)
		}
	}
	e, ok := b.entries[key]
	if !ok {
		e.delay = failedPodsBackoffInitial
	} else {
		e.delay = min(2*e.delay, failedPodsBackoffMax)
	}
	e.lastUpdate = now
	b.entries[key] = e
}

func (b *backoff) expired(e backoffEntry, now time.Time) bool {
	return now.Sub(e.lastUpdate) > 2*failedPodsBackoffMax
}
