package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/store"
)

// newStore starts a private embedded etcd for one test.
func newStore(t testing.TB, opts ...store.Option) *store.Store {
	t.Helper()
	e, err := store.StartEmbedded(store.EmbeddedOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return store.New(e.Client, opts...)
}

func TestCreateGetUpdateDelete(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := store.Key("pods", "default", "web")

	rev, err := s.Create(ctx, key, []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, key, []byte("again")); !errors.Is(err, store.ErrExists) {
		t.Fatalf("creating an existing key: got %v, want ErrExists", err)
	}
	kv, err := s.Get(ctx, key)
	if err != nil || string(kv.Value) != "v1" || kv.Rev != rev {
		t.Fatalf("get: %+v %v, want v1 at rev %d", kv, err, rev)
	}

	rev2, err := s.Update(ctx, key, []byte("v2"), rev)
	if err != nil || rev2 <= rev {
		t.Fatalf("update: rev %d err %v", rev2, err)
	}
	if _, err := s.Update(ctx, key, []byte("stale"), rev); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("update with a stale revision: got %v, want ErrConflict", err)
	}
	if _, err := s.Delete(ctx, key, rev); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("delete with a stale revision: got %v, want ErrConflict", err)
	}
	if _, err := s.Delete(ctx, key, rev2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete: got %v, want ErrNotFound", err)
	}
	if _, err := s.Update(ctx, key, []byte("x"), rev2); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a deleted key: got %v, want ErrNotFound", err)
	}
	// A deleted key can be created again: CreateRevision is 0 once more.
	if _, err := s.Create(ctx, key, []byte("v3")); err != nil {
		t.Fatalf("re-create after delete: %v", err)
	}
}

func TestListIsOneSnapshotAcrossPages(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	for i := range 5 {
		if _, err := s.Create(ctx, store.Key("pods", "default", fmt.Sprintf("p%d", i)), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	// "podtemplates" must not leak into a list of "pods".
	s.Create(ctx, store.Key("podtemplates", "default", "t"), []byte("x"))

	first, err := s.List(ctx, store.Prefix("pods", ""), store.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.KVs) != 2 || !first.More {
		t.Fatalf("first page: %d items, more=%v", len(first.KVs), first.More)
	}
	// A write after the first page must not show up in later pages.
	s.Create(ctx, store.Key("pods", "default", "p9"), []byte("late"))
	var names []string
	opts := store.ListOptions{Rev: first.Rev, Limit: 2, After: first.KVs[1].Key}
	for {
		page, err := s.List(ctx, store.Prefix("pods", ""), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range page.KVs {
			names = append(names, kv.Key)
		}
		if !page.More {
			break
		}
		opts.After = page.KVs[len(page.KVs)-1].Key
	}
	if len(names) != 3 {
		t.Fatalf("later pages: %v, want p2..p4 only", names)
	}
}

func TestWatchDeliversEveryChangeAfterARevisionInOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStore(t)
	key := store.Key("pods", "default", "web")
	start, _ := s.Revision(ctx)
	r1, _ := s.Create(ctx, key, []byte("a"))
	r2, _ := s.Update(ctx, key, []byte("b"), r1)
	s.Delete(ctx, key, r2)

	events, errf := s.Watch(ctx, store.Prefix("pods", ""), start)
	want := []struct {
		typ         store.EventType
		value, prev string
		created     bool
	}{
		{store.Put, "a", "", true},
		{store.Put, "b", "a", false},
		{store.Delete, "", "b", false},
	}
	var last int64
	for i, w := range want {
		ev := next(t, events)
		if ev.Type != w.typ || string(ev.Value) != w.value || string(ev.PrevValue) != w.prev || ev.Created != w.created {
			t.Errorf("event %d: %+v, want %+v", i, ev, w)
		}
		if ev.Rev <= last {
			t.Errorf("event %d: revision %d not after %d", i, ev.Rev, last)
		}
		last = ev.Rev
	}
	cancel()
	for range events {
	}
	if err := errf(); err != nil {
		t.Fatalf("a cancelled watch ends without error, got %v", err)
	}
}

func TestWatchFromACompactedRevisionFails(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := store.Key("pods", "default", "web")
	rev, _ := s.Create(ctx, key, []byte("a"))
	rev, _ = s.Update(ctx, key, []byte("b"), rev)
	if err := s.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	events, errf := s.Watch(ctx, store.Prefix("pods", ""), 1)
	for range events {
	}
	var ce *store.CompactedError
	if err := errf(); !errors.As(err, &ce) || ce.Compacted != rev {
		t.Fatalf("got %v, want CompactedError at %d", err, rev)
	}
}

// The next page of a list begun before a compaction cannot be read at
// the first page's revision.
func TestListAtACompactedRevisionFails(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := store.Key("pods", "default", "web")
	rev, _ := s.Create(ctx, key, []byte("a"))
	later, _ := s.Update(ctx, key, []byte("b"), rev)
	if err := s.Compact(ctx, later); err != nil {
		t.Fatal(err)
	}
	var ce *store.CompactedError
	if _, err := s.List(ctx, store.Prefix("pods", ""), store.ListOptions{Rev: rev}); !errors.As(err, &ce) || ce.Requested != rev {
		t.Fatalf("got %v, want CompactedError for %d", err, rev)
	}
}

func TestCompactorCompactsToThePreviousTicksRevision(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	clk := clocktesting.NewFakeClock(time.Now())
	s := newStore(t, store.WithClock(clk))
	key := store.Key("pods", "default", "web")
	first, _ := s.Create(ctx, key, []byte("a"))
	compactedc := make(chan int64, 1) // compactor → test: each revision compacted to
	donec := make(chan struct{})      // closed when the compactor returns
	go func() {
		defer close(donec)
		s.RunCompactor(ctx, time.Minute, discard(), func(rev int64) { compactedc <- rev })
	}()
	defer func() { cancel(); <-donec }() // before the cleanup closes etcd

	// The compactor is idle when it waits on the clock for its next tick:
	// only then has it finished the previous one.
	idle := func() {
		t.Helper()
		poll := time.NewTicker(time.Millisecond) // polling a condition, not waiting for time to pass
		defer poll.Stop()
		deadline := time.After(5 * time.Second)
		for !clk.HasWaiters() {
			select {
			case <-poll.C:
			case <-deadline:
				t.Fatal("the compactor never waited for its next tick")
			}
		}
	}
	idle()
	clk.Step(time.Minute) // first tick: notes the revision, first
	idle()
	second, _ := s.Update(ctx, key, []byte("b"), first)
	select {
	case rev := <-compactedc:
		t.Fatalf("compacted to %d on the first tick: a watcher would have had no interval to resume", rev)
	default:
	}
	clk.Step(time.Minute) // second tick: compacts to what the first one saw
	select {
	case rev := <-compactedc:
		if rev != first {
			t.Fatalf("compacted to %d, want %d: the previous tick's revision, not the current %d", rev, first, second)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second tick did not compact")
	}

	events, errf := s.Watch(ctx, store.Prefix("pods", ""), 0)
	for range events {
	}
	var ce *store.CompactedError
	if err := errf(); !errors.As(err, &ce) || ce.Compacted != first {
		t.Fatalf("a watch from before the compaction got %v, want CompactedError at %d", err, first)
	}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	events, _ = s.Watch(wctx, store.Prefix("pods", ""), first)
	if ev := next(t, events); ev.Rev != second {
		t.Fatalf("a watch after the compacted revision got %+v, want the update at %d", ev, second)
	}
}

func next(t *testing.T, events <-chan store.Event) store.Event {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
		return store.Event{}
	}
}
