package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mkube/mkube/store"
)

// A key written with a TTL goes away by itself once nobody writes it for
// the TTL (etcd revokes the lease: a Delete event), lives on while it is
// written again within the TTL, and can be removed at once.
func TestAKeyWithATTLExpiresUnlessWrittenAgain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStore(t)
	const ttl = 2 * time.Second // etcd's minimum with its default election timeout
	key := store.Root + "masterleases/10.0.0.1"

	start, _ := s.Revision(ctx)
	events, _ := s.Watch(ctx, key, start)
	written := time.Now()
	if _, err := s.PutWithTTL(ctx, key, []byte("a"), ttl); err != nil {
		t.Fatal(err)
	}
	if kv, err := s.Get(ctx, key); err != nil || string(kv.Value) != "a" {
		t.Fatalf("get right after the write: %+v %v", kv, err)
	}
	// Written again every 500 ms for twice the TTL: it never goes.
	renew := time.NewTicker(500 * time.Millisecond)
	defer renew.Stop()
	for time.Since(written) < 2*ttl {
		select {
		case ev := <-events:
			if ev.Type == store.Delete {
				t.Fatalf("the key expired %v after its first write though written again every 500 ms", time.Since(written))
			}
		case <-renew.C:
			if _, err := s.PutWithTTL(ctx, key, []byte("a"), ttl); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Left alone, it is deleted between the TTL and the TTL plus etcd's
	// expiry check (500 ms) after its last write.
	last := time.Now()
	if _, err := s.PutWithTTL(ctx, key, []byte("b"), ttl); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(ttl + 5*time.Second)
	for expired := false; !expired; {
		select {
		case ev := <-events:
			expired = ev.Type == store.Delete
		case <-deadline:
			t.Fatalf("the key is still there %v after its last write, TTL %v", time.Since(last), ttl)
		}
	}
	if gone := time.Since(last); gone < ttl {
		t.Fatalf("the key expired %v after its last write, before its TTL %v", gone, ttl)
	} else {
		t.Logf("the key expired %v after its last write (TTL %v)", gone.Round(time.Millisecond), ttl)
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after the TTL: %v, want ErrNotFound", err)
	}

	// Given back before its TTL: removed at once; a second Remove finds
	// nothing.
	if _, err := s.PutWithTTL(ctx, key, []byte("c"), time.Minute); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		if removed, err := s.Remove(ctx, key); err != nil || removed != want {
			t.Fatalf("remove %d: %v %v, want %v", i+1, removed, err, want)
		}
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after Remove: %v, want ErrNotFound", err)
	}
}
