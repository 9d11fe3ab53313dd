package apiserver

import (
	"context"
	"errors"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// catalog is what the server serves at one moment: the resources, their
// storages and watch caches. The built-in kinds are there from New; custom
// resources come and go with their CustomResourceDefinitions (package
// customresource). A catalog is never changed once published: Replace
// builds the next one and swaps it in, so every request reads the one it
// loaded without a lock.
type catalog struct {
	byPath   map[schema.GroupVersionResource]*Resource
	all      []*Resource // sorted by group, version and name
	storages map[*Resource]*Storage
	caches   map[*Resource]*watchCache
	stops    map[*Resource]context.CancelFunc // ends a watch cache
}

// lookup returns the resource served at /apis/<group>/<version>/<name>.
func (c *catalog) lookup(gv schema.GroupVersion, name string) (*Resource, bool) {
	r, ok := c.byPath[gv.WithResource(name)]
	return r, ok
}

// with is a copy of c without remove and with add (storages and caches
// made for them, not started).
func (c *catalog) with(s *Server, remove, add []*Resource) *catalog {
	next := &catalog{byPath: map[schema.GroupVersionResource]*Resource{}, storages: map[*Resource]*Storage{},
		caches: map[*Resource]*watchCache{}, stops: map[*Resource]context.CancelFunc{}}
	gone := map[*Resource]bool{}
	for _, r := range remove {
		gone[r] = true
	}
	for _, r := range c.all {
		if !gone[r] {
			next.byPath[r.GroupVersionResource()] = r
			next.storages[r], next.caches[r], next.stops[r] = c.storages[r], c.caches[r], c.stops[r]
		}
	}
	for _, r := range add {
		st := &Storage{res: r, store: s.cfg.Store, now: s.clock.Now, admission: s.cfg.Admission, objects: objects{s}, metrics: s.metrics, codec: s.codec}
		next.byPath[r.GroupVersionResource()] = r
		next.storages[r], next.caches[r] = st, newWatchCache(st, s.cfg.WatchCacheSize, s.log, s.clock)
	}
	for _, r := range next.byPath {
		next.all = append(next.all, r)
	}
	sort.Slice(next.all, func(i, j int) bool {
		return next.all[i].GroupVersionResource().String() < next.all[j].GroupVersionResource().String()
	})
	return next
}

// Replace stops serving remove and starts serving add, in one step: a
// CustomResourceDefinition's update swaps its versions' resources without
// a moment of 404. The new resources' watch caches are filled before they
// are published. The removed ones first catch up with etcd, so that their
// watchers get every change made before Replace (a deleted definition's
// last objects' deletions), then end: each watcher's stream ends once it
// has sent what the cache holds (a client's next list of them is 404).
// Only after Start.
func (s *Server) Replace(remove, add []*Resource) error {
	s.replaceMu.Lock()
	defer s.replaceMu.Unlock()
	if s.runCtx == nil {
		return errors.New("the server has not started")
	}
	var rev int64 // every change the removed caches must have before they end
	if len(remove) > 0 {
		var err error
		if rev, err = s.store.Revision(s.runCtx); err != nil {
			return err
		}
	}
	cur := s.served.Load()
	next := cur.with(s, remove, add)
	for _, r := range add {
		ctx, stop := context.WithCancel(s.runCtx)
		if err := startCache(ctx, next.caches[r]); err != nil {
			stop()
			return err
		}
		next.stops[r] = stop
	}
	s.served.Store(next)
	s.openAPIChanged()
	for _, r := range remove {
		c := cur.caches[r]
		if c != nil {
			s.catchUp(c, rev)
		}
		if stop := cur.stops[r]; stop != nil {
			stop()
		}
		if c != nil {
			c.end()
		}
	}
	return nil
}

// catchUpTimeout bounds how long a removed resource's watch cache may
// take to reach etcd's revision: a progress notification comes back in
// milliseconds, so this is only reached if etcd is failing, and then the
// cache ends where it is, as it did before waiting.
const catchUpTimeout = 10 * time.Second

// catchUp waits until c has every change up to rev. A resource being
// removed usually has no events after its last object's deletion, so
// each wait asks etcd for a progress notification, which moves c's
// revision up to etcd's once c has every event before it.
func (s *Server) catchUp(c *watchCache, rev int64) {
	ctx, cancel := context.WithTimeout(s.runCtx, catchUpTimeout)
	defer cancel()
	for {
		latest, changed := c.revision()
		if latest >= rev {
			return
		}
		if err := s.store.RequestProgress(ctx); err != nil && ctx.Err() == nil {
			s.log.Debug("etcd progress request failed", "err", err)
		}
		select {
		case <-ctx.Done():
			s.log.Warn("a removed resource's watch cache ends before catching up", "resource", c.storage.res.Name,
				"rv", latest, "want", rev)
			return
		case <-changed:
		}
	}
}

// startCache runs a watch cache until ctx ends and returns once it is
// watching.
func startCache(ctx context.Context, c *watchCache) error {
	ready := make(chan struct{})
	go c.run(ctx, ready) // owner: the server; stops with ctx
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
