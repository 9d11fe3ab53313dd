package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

var schemaGroupResource = schema.GroupResource{}

// Event is one decoded line of a watch stream.
type Event struct {
	Type   watch.EventType // ADDED, MODIFIED, DELETED, BOOKMARK or ERROR
	Object runtime.Object  // the object; for ERROR a *metav1.Status
}

// Watcher reads a watch stream until it ends or its context is cancelled.
type Watcher struct {
	resp    *http.Response
	scanner *bufio.Scanner
	newObj  func() runtime.Object
	cancel  context.CancelFunc
}

// Watch opens ?watch=true on the resource. Stop it with Stop (or by
// cancelling ctx), or its connection stays open.
func (c *Client) Watch(ctx context.Context, r Resource, namespace string, opts ListOptions) (*Watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	q := opts.query()
	q.Set("watch", "true")
	q.Set("allowWatchBookmarks", "true")
	resp, err := c.send(ctx, http.MethodGet, r.Path(namespace, ""), q, "", nil)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		defer cancel()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, statusError(resp.StatusCode, data)
	}
	sc := bufio.NewScanner(resp.Body)
	// One line is one object; Kubernetes objects stay under etcd's
	// 1.5 MiB value limit, so 4 MiB is ample.
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	return &Watcher{resp: resp, scanner: sc, newObj: r.New, cancel: cancel}, nil
}

// Next blocks for the next event. It returns io.EOF-like errors when the
// stream ends: the caller then re-watches from the last resourceVersion.
func (w *Watcher) Next() (Event, error) {
	if !w.scanner.Scan() {
		if err := w.scanner.Err(); err != nil {
			return Event{}, fmt.Errorf("watch stream: %w", err)
		}
		return Event{}, errStreamEnded
	}
	var raw struct {
		Type   watch.EventType `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(w.scanner.Bytes(), &raw); err != nil {
		return Event{}, fmt.Errorf("decode watch event: %w", err)
	}
	if raw.Type == watch.Error {
		st := &metav1.Status{}
		if err := json.Unmarshal(raw.Object, st); err != nil {
			return Event{}, fmt.Errorf("decode watch error: %w", err)
		}
		return Event{Type: raw.Type, Object: st}, &apierrors.StatusError{ErrStatus: *st}
	}
	obj := w.newObj()
	if err := json.Unmarshal(raw.Object, obj); err != nil {
		return Event{}, fmt.Errorf("decode watch object: %w", err)
	}
	return Event{Type: raw.Type, Object: obj}, nil
}

// Stop closes the stream.
func (w *Watcher) Stop() {
	w.cancel()
	w.resp.Body.Close()
}

type streamEnded struct{}

func (streamEnded) Error() string { return "watch stream ended" }

var errStreamEnded error = streamEnded{}
