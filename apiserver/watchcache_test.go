package apiserver

import (
	"log/slog"
	"testing"

	"k8s.io/utils/clock"
)

func revs(evs []*watchEvent) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.rev
	}
	return out
}

// A list read from etcd can be ahead of the watch cache. A watch from the
// list's revision must not then receive the events up to it that the
// cache had not seen yet: the client would go back in time.
func TestAWatchFromARevisionAheadOfTheCacheSkipsWhatItAlreadyHas(t *testing.T) {
	c := newWatchCache(nil, 16, slog.New(slog.DiscardHandler), clock.RealClock{})
	c.reset(4)
	c.append(&watchEvent{rev: 5})
	seq, ok := c.start(7) // the client listed at 7; the cache is at 5
	if !ok {
		t.Fatal("start(7) refused")
	}
	src := &cacheSource{cache: c, seq: seq, after: 7}
	c.append(&watchEvent{rev: 6})
	c.append(&watchEvent{rev: 7})
	c.append(&watchEvent{rev: 8})
	evs, _, rev, err := src.poll()
	if err != nil || len(evs) != 1 || evs[0].rev != 8 || rev != 8 {
		t.Fatalf("poll = %v (rev %d, err %v), want only the event at 8", revs(evs), rev, err)
	}
}

// A watcher far behind gets the ring in batches; when a batch is cut
// short, the wait channel is ready at once so the rest follows without a
// new event.
func TestABatchCutShortDoesNotWaitForTheNextEvent(t *testing.T) {
	c := newWatchCache(nil, 2*maxBatch, slog.New(slog.DiscardHandler), clock.RealClock{})
	c.reset(0)
	for r := int64(1); r <= maxBatch+10; r++ {
		c.append(&watchEvent{rev: r})
	}
	seq, _ := c.start(0)
	src := &cacheSource{cache: c, seq: seq}
	evs, wait, _, _ := src.poll()
	if len(evs) != maxBatch {
		t.Fatalf("first batch has %d events, want %d", len(evs), maxBatch)
	}
	select {
	case <-wait:
	default:
		t.Fatal("after a full batch the wait channel is not ready: the rest would wait for a new event")
	}
	if evs, _, _, _ := src.poll(); len(evs) != 10 {
		t.Fatalf("second batch has %d events, want 10", len(evs))
	}
}
