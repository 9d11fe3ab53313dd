package dashboard

import (
	"log/slog"
	"sync"
	"time"
)

// Change is one event an informer of the dashboard received, as the
// browser's watch stream view shows it and its cluster view applies it.
type Change struct {
	// Type is the watch event's: ADDED, MODIFIED or DELETED; LISTED for
	// the objects of an informer's first list, which arrive in the list's
	// answer, not as watch events.
	Type      string    `json:"type"`
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	RV        string    `json:"rv"`
	At        time.Time `json:"at"` // when the dashboard's informer got it
	// The object, summed up for the cluster view (pods and nodes only).
	Pod  *PodSummary  `json:"pod,omitempty"`
	Node *NodeSummary `json:"node,omitempty"`
	// From is the node a pod was on before this MODIFIED, when it changed
	// (the binding, step 10: "" to a node). A page that was sent only a
	// node's count, not its pods (sse.go's bounded snapshot), moves the
	// pod's count from here.
	From *string `json:"from,omitempty"`
}

// subscriberBuffer is how many changes a browser may fall behind before
// the hub drops it: 4096 is several seconds of a busy cluster's pods and
// events, far more than a page drawing at 60 frames a second lags.
const subscriberBuffer = 4096

// Broadcast fans what it is given out to every open event stream: the
// informers' Changes, the History's Samples. Publish is called on the
// producers' goroutines; each subscriber's channel is read by its SSE
// handler. A subscriber that falls behind
// by subscriberBuffer changes is dropped (its channel closed) rather
// than slow the informers: its browser reconnects and starts again
// from a fresh snapshot.
type Broadcast[T any] struct {
	log  *slog.Logger
	what string // for the log: "changes", "samples"
	mu   sync.Mutex
	subs map[chan T]struct{} // closed by Unsubscribe or by Publish when full
}

// Hub is the broadcast of the informers' changes.
type Hub = Broadcast[Change]

// NewBroadcast returns a broadcast with no subscribers.
func NewBroadcast[T any](log *slog.Logger, what string) *Broadcast[T] {
	return &Broadcast[T]{log: log, what: what, subs: map[chan T]struct{}{}}
}

// Subscribe returns a channel of every change published from now on.
// The caller must Unsubscribe it.
func (h *Broadcast[T]) Subscribe() chan T {
	c := make(chan T, subscriberBuffer)
	h.mu.Lock()
	h.subs[c] = struct{}{}
	h.mu.Unlock()
	return c
}

// Unsubscribe stops and closes c, unless Publish already dropped it.
func (h *Broadcast[T]) Unsubscribe(c chan T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[c]; ok {
		delete(h.subs, c)
		close(c)
	}
}

// Publish sends ch to every subscriber without blocking.
func (h *Broadcast[T]) Publish(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- v:
		default:
			delete(h.subs, c)
			close(c)
			h.log.Warn("dropped a browser's event stream: it fell behind", "what", h.what, "buffered", subscriberBuffer)
		}
	}
}

// Subscribers is how many streams are open.
func (h *Broadcast[T]) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
