package backoff

import (
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// The crash-loop back-off (seed 003 §5.3; Kubernetes' "container restart
// policy"): a container that keeps exiting is restarted after a delay
// that starts at 10 s and doubles with each restart up to 5 minutes, and
// is forgotten once the container has run for 10 minutes (twice the cap)
// without a restart. While it waits, the container is CrashLoopBackOff.
//
// The rule is client-go's flowcontrol.Backoff, the kubelet's: the first
// exit restarts at once and arms the delay; an exit less than the delay
// after the last restart waits out the rest of it.

// DefaultInitial and DefaultMax are Kubernetes' delays.
const (
	DefaultInitial = 10 * time.Second
	DefaultMax     = 300 * time.Second
)

// BackOff holds the delay of each container, keyed by pod UID and
// container name.
type BackOff struct {
	initial, max time.Duration
	clock        clock.PassiveClock

	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	delay      time.Duration
	lastUpdate time.Time // when the container was last restarted
}

func New(initial, max time.Duration, clk clock.PassiveClock) *BackOff {
	return &BackOff{initial: initial, max: max, clock: clk, entries: map[string]*entry{}}
}

func Key(uid, container string) string { return uid + "/" + container }

// expired: the container ran long enough since its last restart to be
// trusted again.
func (b *BackOff) expired(e *entry, eventTime time.Time) bool {
	return eventTime.Sub(e.lastUpdate) > 2*b.max
}

// Wait is how much longer the container that exited at finishedAt must
// wait before its restart (0: restart now), and the delay it is in.
func (b *BackOff) Wait(key string, finishedAt time.Time) (remaining, delay time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.expired(e, finishedAt) {
		return 0, 0
	}
	return max(e.delay-b.clock.Since(finishedAt), 0), e.delay
}

// WaitSinceUpdate is how much longer the back-off of key lasts, counted
// from its last step (client-go's IsInBackOffSinceUpdate): what an image
// pull waits after it failed.
func (b *BackOff) WaitSinceUpdate(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	now := b.clock.Now()
	if !ok || b.expired(e, now) {
		return 0
	}
	return max(e.delay-now.Sub(e.lastUpdate), 0)
}

// Next records a restart of the container that exited at finishedAt: the
// delay before the one after doubles, or starts again at the initial one.
func (b *BackOff) Next(key string, finishedAt time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	switch {
	case !ok || b.expired(e, finishedAt):
		e = &entry{delay: b.initial}
		b.entries[key] = e
	default:
		e.delay = min(2*e.delay, b.max)
	}
	e.lastUpdate = b.clock.Now()
}

// Forget drops the delay of key.
func (b *BackOff) Forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, key)
}

// ForgetPod drops the delays of a pod's containers and images: the pod
// is gone.
func (b *BackOff) ForgetPod(uid string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for key := range b.entries {
		if strings.HasPrefix(key, uid+"/") || strings.HasPrefix(key, uid+"_") {
			delete(b.entries, key)
		}
	}
}
