package apiserver

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/store"
)

// watchEvent is one change of one object, decoded once and shared, read-only,
// by every watcher. It is also encoded at most once per stream encoding
// (JSON, protobuf), by the first watcher that needs it: serialising each
// event once and copying the bytes to every watcher is what makes a watch
// cache cheap to fan out, whichever media type each watcher negotiated.
type watchEvent struct {
	typ  store.EventType
	rev  int64
	obj  runtime.Object // after the change (nil for Delete); resourceVersion = rev
	prev runtime.Object // before the change (nil for a create); resourceVersion = rev, as Kubernetes sends a DELETED object

	objEncoded, prevEncoded [numStreamEncodings]encodedOnce
}

// encodedOnce is one object's bytes in one encoding, made by the first
// watcher that asks and read by all the others.
type encodedOnce struct {
	once sync.Once
	data []byte
	err  error
}

func (o *encodedOnce) get(enc streamEncoding, obj runtime.Object) ([]byte, error) {
	o.once.Do(func() { o.data, o.err = enc.encode(obj) })
	return o.data, o.err
}

func (e *watchEvent) objBytes(enc streamEncoding) ([]byte, error) {
	return e.objEncoded[enc].get(enc, e.obj)
}

func (e *watchEvent) prevBytes(enc streamEncoding) ([]byte, error) {
	return e.prevEncoded[enc].get(enc, e.prev)
}

// decodeEvent turns an etcd event into a watchEvent of this resource.
func (s *Storage) decodeEvent(ev store.Event) (*watchEvent, error) {
	we := &watchEvent{typ: ev.Type, rev: ev.Rev}
	var err error
	if ev.Type == store.Put {
		if we.obj, err = s.decode(ev.Value, ev.Rev); err != nil {
			return nil, err
		}
	}
	if ev.PrevValue != nil {
		if we.prev, err = s.decode(ev.PrevValue, ev.Rev); err != nil {
			return nil, err
		}
	}
	return we, nil
}

// watchCache holds one etcd watch per resource and the most recent events
// in a ring, so that any number of HTTP watchers are served from memory
// (kube-apiserver's "cacher"). A watcher that asks for a revision older than
// the ring falls back to its own etcd watch; one that falls behind by more
// than the ring is disconnected and resumes from its last resourceVersion.
type watchCache struct {
	storage *Storage
	log     *slog.Logger
	clock   clock.Clock // how long to wait before etcd is tried again

	// mu: the run loop writes; the many watchers read at once.
	mu   sync.RWMutex
	ring []*watchEvent
	next uint64 // sequence number of the next event; event n lives in ring[n % len(ring)]
	// oldestRev: every change with a revision above it is in the ring or yet
	// to come. It rises as the ring overwrites old events.
	oldestRev int64
	latestRev int64 // every change up to here has been appended
	// changed is closed (and replaced) whenever next or latestRev moves,
	// or the cache ends: a broadcast to every waiting watcher. Closed
	// under mu, by the run loop or by end.
	changed chan struct{}
	// ended: the resource is no longer served (end); a watcher that has
	// read every event is done.
	ended bool
}

func newWatchCache(s *Storage, size int, log *slog.Logger, clk clock.Clock) *watchCache {
	return &watchCache{storage: s, log: log, clock: clk, ring: make([]*watchEvent, size), changed: make(chan struct{})}
}

// run keeps the cache fed from etcd until ctx ends. If the etcd watch fails
// it starts again from the current revision; the jump in sequence numbers
// disconnects every watcher, which then resumes from its own revision.
func (c *watchCache) run(ctx context.Context, ready chan<- struct{}) {
	prefix := c.storage.store
	for ctx.Err() == nil {
		rev, err := prefix.Revision(ctx)
		if err != nil {
			c.log.Warn("watch cache: read revision", "resource", c.storage.res.Name, "err", err)
			c.sleep(ctx, time.Second)
			continue
		}
		c.reset(rev)
		if ready != nil {
			close(ready)
			ready = nil
		}
		wctx, cancel := context.WithCancel(ctx)
		events, errf := prefix.Watch(wctx, store.Prefix(c.storage.res.storageName(), ""), rev)
		for ev := range events {
			if ev.Type == store.Progress {
				c.progress(ev.Rev)
				continue
			}
			we, err := c.decodeEvent(ctx, ev)
			if err != nil {
				c.log.Error("watch cache: undecodable event skipped", "key", ev.Key, "err", err)
				continue
			}
			c.logEvent(we)
			c.append(we)
		}
		cancel()
		if err := errf(); err != nil {
			c.log.Warn("watch cache: etcd watch ended, restarting", "resource", c.storage.res.Name, "err", err)
			c.sleep(ctx, time.Second)
		}
	}
}

// decodeEvent decodes ev; a conversion that failed (a custom resource's
// conversion webhook is down) is tried again, less and less often, until
// it succeeds or ctx ends: the event may not be lost, and none after it
// may pass it.
func (c *watchCache) decodeEvent(ctx context.Context, ev store.Event) (*watchEvent, error) {
	wait := time.Second
	for {
		we, err := c.storage.decodeEvent(ev)
		if !errors.As(err, new(*conversionError)) || ctx.Err() != nil {
			return we, err
		}
		c.log.Warn("watch cache: cannot convert an event, waiting before trying again", "key", ev.Key, "rv", ev.Rev, "wait", wait, "err", err)
		c.sleep(ctx, wait)
		wait = min(2*wait, time.Minute)
	}
}

// logEvent logs an etcd event: at info level, in the seed's words, when
// its kind says which step of seed 000 it is (etcd reporting a new pod is
// step 4); at debug level otherwise.
func (c *watchCache) logEvent(ev *watchEvent) {
	if es := c.storage.res.EventStep; es != nil {
		if step, what, attrs := es(ev.obj, ev.prev); step != 0 {
			c.log.Info(what, append(append([]any{seedstep.Key, step}, attrs...), "rv", ev.rev)...)
			c.storage.metrics.observeStep(step, ev.obj)
			return
		}
	}
	c.log.Debug("etcd event", "resource", c.storage.res.Name, "type", ev.typ, "rv", ev.rev)
}

// sleep waits before etcd is tried again.
func (c *watchCache) sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-c.clock.After(d):
	}
}

func (c *watchCache) reset(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next += uint64(len(c.ring)) + 1
	clear(c.ring)
	c.oldestRev, c.latestRev = rev, rev
	c.broadcast()
}

func (c *watchCache) append(ev *watchEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	slot := c.next % uint64(len(c.ring))
	if old := c.ring[slot]; old != nil {
		c.oldestRev = max(c.oldestRev, old.rev)
	}
	c.ring[slot] = ev
	c.next++
	c.latestRev = ev.rev
	c.broadcast()
}

func (c *watchCache) progress(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev > c.latestRev {
		c.latestRev = rev
		c.broadcast()
	}
}

// end marks the cache ended, its resource no longer served: each
// watcher's stream ends once it has read the events the cache holds.
// Called after the cache's etcd watch has stopped, so nothing follows.
func (c *watchCache) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	c.broadcast()
}

// revision is the revision up to which the cache has every change, and
// a channel closed when it (or the ring) changes.
func (c *watchCache) revision() (int64, <-chan struct{}) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.latestRev, c.changed
}

// compacted raises the window's floor to an etcd compaction: watchers
// already streaming keep their events, new ones older than rev are refused.
func (c *watchCache) compacted(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.oldestRev = max(c.oldestRev, rev)
}

// broadcast wakes every waiter. Callers hold mu.
func (c *watchCache) broadcast() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// start returns the sequence number of the first event after rev, or false
// if the ring no longer (or not yet) covers rev.
func (c *watchCache) start(rev int64) (uint64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if rev < c.oldestRev {
		return 0, false
	}
	first := c.next - uint64(min(c.next, uint64(len(c.ring))))
	n := int(c.next - first)
	i := sort.Search(n, func(i int) bool {
		ev := c.ring[(first+uint64(i))%uint64(len(c.ring))]
		return ev != nil && ev.rev > rev
	})
	return first + uint64(i), true
}

// maxBatch bounds how many events a watcher takes per lock, so a slow
// client never holds the cache's lock for long.
const maxBatch = 256

// read returns the events from seq on. With none, it returns a channel that
// is closed when there may be more, and the revision up to which the
// watcher is complete (for bookmarks). lost means seq fell out of the
// ring, or the cache has ended and the watcher has read all it holds:
// either way the watcher's stream ends.
func (c *watchCache) read(seq uint64) (evs []*watchEvent, next uint64, wait <-chan struct{}, rev int64, lost bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.next-seq > uint64(len(c.ring)) || (c.ended && seq == c.next) {
		return nil, seq, nil, 0, true
	}
	for seq < c.next && len(evs) < maxBatch {
		evs = append(evs, c.ring[seq%uint64(len(c.ring))])
		seq++
	}
	return evs, seq, c.changed, c.latestRev, false
}
