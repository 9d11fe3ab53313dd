package client

import (
	"bufio"
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// FuzzWatchNext feeds arbitrary bytes to the watch stream decoder every
// informer relies on: it must return events or errors, never panic, and an
// ERROR event always comes with an error.
func FuzzWatchNext(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"5"}}}` + "\n"))
	f.Add([]byte(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}}` + "\n"))
	f.Add([]byte(`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n{\"type\":"))
	f.Add([]byte("\n\n{}\n[]\nnull\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		sc := bufio.NewScanner(bytes.NewReader(stream))
		sc.Buffer(make([]byte, 1024), 1<<20)
		w := &Watcher{scanner: sc, newObj: func() runtime.Object { return &corev1.Pod{} }}
		for range 100 {
			ev, err := w.Next()
			if ev.Type == watch.Error && err == nil {
				t.Fatalf("an ERROR event without an error: %+v", ev)
			}
			if err != nil && err == errStreamEnded {
				return
			}
			if err == nil && ev.Object == nil {
				t.Fatalf("an event without an object: %+v", ev)
			}
		}
	})
}
