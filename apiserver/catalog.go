package apiserver

import (
	"context"
	"errors"
	"sort"

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
		st := &Storage{res: r, store: s.cfg.Store, now: s.clock.Now, admission: s.cfg.Admission, objects: objects{s}}
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
// are published; the removed ones' watchers are disconnected (a client's
// next list of them is 404). Only after Start.
func (s *Server) Replace(remove, add []*Resource) error {
	s.replaceMu.Lock()
	defer s.replaceMu.Unlock()
	if s.runCtx == nil {
		return errors.New("the server has not started")
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
		if stop := cur.stops[r]; stop != nil {
			stop()
		}
		if c := cur.caches[r]; c != nil {
			c.disconnect()
		}
	}
	return nil
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
