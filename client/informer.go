package client

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/internal/seedstep"
)

// Handler reacts to changes in an Informer's cache. Handlers run on the
// informer's goroutine, one event at a time, so they must be quick: a
// controller only puts a key on its work queue. Any field may be nil.
type Handler struct {
	OnAdd    func(obj runtime.Object)
	OnUpdate func(old, obj runtime.Object)
	OnDelete func(obj runtime.Object)
}

// Backoff bounds: a failing list or watch is retried after 1s, doubling up
// to 30s, with jitter so that a restarted API server is not hit by every
// component at the same instant.
const (
	initialBackoff = time.Second
	maxBackoff     = 30 * time.Second
)

// Informer list-watches one resource into a Cache and calls handlers.
type Informer struct {
	client    *Client
	res       Resource
	namespace string
	opts      ListOptions // selectors only
	cache     *Cache
	handlers  []Handler
	log       *slog.Logger
	clock     clock.Clock
	synced    atomic.Bool
	// transform, if set, is applied to every object before the cache
	// and the handlers see it (SetTransform).
	transform func(runtime.Object) runtime.Object
}

// NewInformer watches res in namespace ("" = all) narrowed by the
// selectors in opts. log may be nil.
func NewInformer(c *Client, res Resource, namespace string, opts ListOptions, log *slog.Logger) *Informer {
	if log == nil {
		log = slog.Default()
	}
	attrs := []any{"resource", res.Name}
	if opts.LabelSelector != "" {
		attrs = append(attrs, "labelSelector", opts.LabelSelector)
	}
	if opts.FieldSelector != "" {
		attrs = append(attrs, "fieldSelector", opts.FieldSelector)
	}
	return &Informer{client: c, res: res, namespace: namespace,
		opts:  ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector},
		cache: NewCache(), log: log.With(attrs...), clock: clock.RealClock{}}
}

// Cache is the informer's local copy.
func (i *Informer) Cache() *Cache { return i.cache }

// AddHandler registers h; call it before Run.
func (i *Informer) AddHandler(h Handler) { i.handlers = append(i.handlers, h) }

// SetTransform makes the informer keep f(obj) instead of each object it
// lists or receives, as client-go's SetTransform does: a client that
// needs a few fields of many objects (a dashboard of 150,000 pods) keeps
// only those. f must return a new object, never change obj. Call it
// before Run.
func (i *Informer) SetTransform(f func(runtime.Object) runtime.Object) { i.transform = f }

// HasSynced reports whether the first list has been loaded into the cache.
func (i *Informer) HasSynced() bool { return i.synced.Load() }

// errExpired: the server no longer has the history after our
// resourceVersion (410 Gone), so only a fresh list can catch us up.
var errExpired = errors.New("resource version expired")

// Run lists and watches until ctx is cancelled.
func (i *Informer) Run(ctx context.Context) {
	backoff := initialBackoff
	for ctx.Err() == nil {
		rv, err := i.list(ctx)
		if err == nil {
			var healthy bool
			healthy, err = i.watch(ctx, rv)
			if healthy {
				// Only a watch that delivered events shows the server
				// works; a list alone does not, or a watch that always
				// fails would be re-listed every second.
				backoff = initialBackoff
			}
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errExpired) {
			continue // re-list at once: waiting would not bring the history back
		}
		i.log.Warn("list-watch failed, retrying", "err", err, "after", backoff)
		i.sleep(ctx, jitter(backoff))
		backoff = min(2*backoff, maxBackoff)
	}
}

// list loads the current state and returns its resourceVersion.
func (i *Informer) list(ctx context.Context) (string, error) {
	list := i.res.NewList()
	if err := i.client.List(ctx, i.res, i.namespace, i.opts, list); err != nil {
		return "", err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return "", err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return "", err
	}
	i.replace(items)
	i.synced.Store(true)
	// Seed 000 step 1: every component lists, then watches from the
	// list's resourceVersion.
	i.log.Info("listed", seedstep.Key, seedstep.ComponentsListWatch, "count", len(items), "rv", lm.GetResourceVersion())
	return lm.GetResourceVersion(), nil
}

// replace makes the cache equal to a fresh list, telling the handlers what
// changed since the cache last knew: objects gone while we were not
// watching are deleted, new ones added, the rest updated.
func (i *Informer) replace(items []runtime.Object) {
	stale := i.cache.keys()
	for _, obj := range items {
		delete(stale, KeyOf(obj))
		i.apply(watch.Modified, obj)
	}
	for key := range stale {
		if old, ok := i.cache.remove(key); ok {
			i.notifyDelete(old)
		}
	}
}

// watch streams changes after rv until the stream or ctx ends. A stream
// that ends normally (its timeout) is reopened from the last rv; nothing
// is missed because every event carries the rv to resume after. healthy
// reports whether the watch got past the list's rv: some event or bookmark
// arrived, so the server worked for a while.
func (i *Informer) watch(ctx context.Context, rv string) (healthy bool, err error) {
	listRV := rv
	for {
		// Kubernetes' reflector asks for 5-10 minute watches, so that
		// connections are rebalanced across API servers now and then.
		timeout := int64(300 + rand.IntN(300))
		w, err := i.client.Watch(ctx, i.res, i.namespace, ListOptions{
			LabelSelector: i.opts.LabelSelector, FieldSelector: i.opts.FieldSelector,
			ResourceVersion: rv, TimeoutSeconds: timeout})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				return rv != listRV, errExpired
			}
			return rv != listRV, err
		}
		i.log.Info("watching", seedstep.Key, seedstep.ComponentsListWatch, "rv", rv)
		started, from := i.clock.Now(), rv
		rv, err = i.consume(w, rv)
		w.Stop()
		if errors.Is(err, errStreamEnded) {
			if rv == from && i.clock.Since(started) < time.Second {
				// As client-go's reflector: a watch closed at once with
				// nothing in it is a failing server, not a timeout, and
				// must back off rather than spin.
				return rv != listRV, errors.New("very short watch: ended in under 1s with no events")
			}
			continue
		}
		return rv != listRV, err
	}
}

// consume applies the events of one stream and returns the last rv seen.
func (i *Informer) consume(w *Watcher, rv string) (string, error) {
	for {
		ev, err := w.Next()
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				i.log.Info("resourceVersion too old, re-listing", "rv", rv, "err", err)
				return rv, errExpired
			}
			return rv, err
		}
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			return rv, err
		}
		rv = m.GetResourceVersion()
		if ev.Type == watch.Bookmark {
			i.log.Debug("bookmark", "rv", rv)
			continue
		}
		i.log.Info("event", "type", ev.Type, "object", KeyOf(ev.Object), "rv", rv)
		i.apply(ev.Type, ev.Object)
	}
}

// apply updates the cache and calls the handlers.
func (i *Informer) apply(typ watch.EventType, obj runtime.Object) {
	if i.transform != nil {
		obj = i.transform(obj)
	}
	if typ == watch.Deleted {
		i.cache.remove(KeyOf(obj))
		i.notifyDelete(obj) // the event carries the object's last state
		return
	}
	old, existed := i.cache.set(obj)
	for _, h := range i.handlers {
		switch {
		case existed && h.OnUpdate != nil:
			h.OnUpdate(old, obj)
		case !existed && h.OnAdd != nil:
			h.OnAdd(obj)
		}
	}
}

func (i *Informer) notifyDelete(obj runtime.Object) {
	for _, h := range i.handlers {
		if h.OnDelete != nil {
			h.OnDelete(obj)
		}
	}
}

func (i *Informer) sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-i.clock.After(d):
	}
}

// jitter spreads d by up to +20%.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

// WaitForSync blocks until every informer has listed once, or ctx ends.
func WaitForSync(ctx context.Context, informers ...*Informer) bool {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		done := true
		for _, inf := range informers {
			done = done && inf.HasSynced()
		}
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
