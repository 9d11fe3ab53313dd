package kubelet

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

// DefaultBackOffInitial and DefaultBackOffMax are Kubernetes' delays.
const (
	DefaultBackOffInitial = 10 * time.Second
	DefaultBackOffMax     = 300 * time.Second
)

// backOff holds the delay of each container, keyed by pod UID and
// container name.
type backOff struct {
	initial, max time.Duration
	clock        clock.PassiveClock

	mu      sync.Mutex
	entries map[string]*backOffEntry
}

type backOffEntry struct {
	delay      time.Duration
	lastUpdate time.Time // when the container was last restarted
}

func newBackOff(initial, max time.Duration, clk clock.PassiveClock) *backOff {
	return &backOff{initial: initial, max: max, clock: clk, entries: map[string]*backOffEntry{}}
}

func backOffKey(uid, container string) string { return uid + "/" + container }

// expired: the container ran long enough since its last restart to be
// trusted again.
func (b *backOff) expired(e *backOffEntry, eventTime time.Time) bool {
	return eventTime.Sub(e.lastUpdate) > 2*b.max
}

// wait is how much longer the container that exited at finishedAt must
// wait before its restart (0: restart now), and the delay it is in.
func (b *backOff) wait(key string, finishedAt time.Time) (remaining, delay time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.expired(e, finishedAt) {
		return 0, 0
	}
	return max(e.delay-b.clock.Since(finishedAt), 0), e.delay
}

// waitSinceUpdate is how much longer the back-off of key lasts, counted
// from its last step (client-go's IsInBackOffSinceUpdate): what an image
// pull waits after it failed.
func (b *backOff) waitSinceUpdate(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	now := b.clock.Now()
	if !ok || b.expired(e, now) {
		return 0
	}
	return max(e.delay-now.Sub(e.lastUpdate), 0)
}

// next records a restart of the container that exited at finishedAt: the
// delay before the one after doubles, or starts again at the initial one.
func (b *backOff) next(key string, finishedAt time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	switch {
	case !ok || b.expired(e, finishedAt):
		e = &backOffEntry{delay: b.initial}
		b.entries[key] = e
	default:
		e.delay = min(2*e.delay, b.max)
	}
	e.lastUpdate = b.clock.Now()
}

// forget drops the delay of key.
func (b *backOff) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, key)
}

// forgetPod drops the delays of a pod's containers and images: the pod
// is gone.
func (b *backOff) forgetPod(uid string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for key := range b.entries {
		if strings.HasPrefix(key, uid+"/") || strings.HasPrefix(key, uid+"_") {
			delete(b.entries, key)
		}
	}
}
