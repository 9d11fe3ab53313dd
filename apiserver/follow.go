package apiserver

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/store"
)

// Follower keeps an in-memory copy of one kind inside the API server
// itself: the RBAC authorizer's roles and bindings. kube-apiserver feeds
// its authorizer from informers on a loopback client; mkube's server feeds
// it from its own storage and watch cache, the same list-then-watch
// without the HTTP in between.
type Follower interface {
	// Replace is every object of the kind: first, and again whenever the
	// follower fell behind the watch cache and the kind was listed anew.
	Replace(objs []runtime.Object)
	// Update is one change, in etcd's order: obj nil for a deletion, prev
	// nil for a creation. The objects are shared: read, never modify.
	Update(obj, prev runtime.Object)
}

// relistDelay is how long a follower waits before listing again after
// etcd failed: the watch cache's own pause before it retries.
const relistDelay = time.Second

// Follow lists res's objects into f before it returns, then feeds it every
// change until ctx ends, from a goroutine it starts. Call it after Start.
func (s *Server) Follow(ctx context.Context, res schema.GroupVersionResource, f Follower) error {
	st := s.StorageFor(res)
	if st == nil {
		return fmt.Errorf("follow %s: not served", res)
	}
	rev, err := s.relist(ctx, st, f)
	if err != nil {
		return fmt.Errorf("follow %s: %w", res, err)
	}
	go func() { // owner: the server; stops with ctx
		for ctx.Err() == nil {
			err := s.feed(ctx, st, rev, f)
			if ctx.Err() != nil {
				return
			}
			s.log.Debug("follower lost the watch, listing again", "resource", st.res.Name, "err", err)
			if rev, err = s.relist(ctx, st, f); err != nil {
				s.log.Warn("follower could not list", "resource", st.res.Name, "err", err)
				select {
				case <-ctx.Done():
				case <-s.clock.After(relistDelay):
				}
			}
		}
	}()
	return nil
}

// relist replaces the follower's objects with what is stored now, and
// returns the revision they are at.
func (s *Server) relist(ctx context.Context, st *Storage, f Follower) (int64, error) {
	objs, res, err := st.List(ctx, "", store.ListOptions{})
	if err != nil {
		return 0, err
	}
	f.Replace(objs)
	return res.Rev, nil
}

// feed applies the changes after rev, from the watch cache (or etcd, if
// the cache no longer reaches back to rev), until ctx ends or the source
// fails.
func (s *Server) feed(ctx context.Context, st *Storage, rev int64, f Follower) error {
	ctx, cancel := context.WithCancel(ctx) // ends an etcd source's goroutine with this feed
	defer cancel()
	src := s.sourceFor(ctx, st, rev)
	for {
		evs, wait, _, err := src.poll()
		if err != nil {
			return err
		}
		for _, ev := range evs {
			f.Update(ev.obj, ev.prev)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wait:
		}
	}
}
