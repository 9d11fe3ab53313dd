package apiserver

import (
	"bytes"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// The watch cache encodes an event's object once per stream encoding,
// however many watchers of that encoding read it: the second watcher
// gets the very bytes the first one made.
func TestAnEventIsEncodedOncePerMediaType(t *testing.T) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "7"}}
	ev := &watchEvent{obj: pod, rev: 7}
	for _, enc := range []streamEncoding{streamJSON, streamProtobuf} {
		first, err := ev.objBytes(enc)
		if err != nil {
			t.Fatal(err)
		}
		second, _ := ev.objBytes(enc)
		if &first[0] != &second[0] {
			t.Errorf("encoding %d: the second watcher's bytes are a new encoding", enc)
		}
		got, _, err := codecs.UniversalDeserializer().Decode(first, nil, nil)
		if err != nil || got.(*corev1.Pod).Name != "web" {
			t.Errorf("encoding %d: decode %q: %v", enc, first, err)
		}
	}
	pb, _ := ev.objBytes(streamProtobuf)
	js, _ := ev.objBytes(streamJSON)
	if !bytes.HasPrefix(pb, []byte("k8s\x00")) || js[0] != '{' {
		t.Errorf("protobuf %q, JSON %q", pb, js)
	}
}
