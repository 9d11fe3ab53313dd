// Package record writes Kubernetes Events: the Scheduled, Pulling, Started,
// SuccessfulCreate... lines that `kubectl describe` shows, and that let a
// learner follow an object through the 13 steps from the API alone.
//
// It all lives in recorder.go: the Recorder queues Events and posts them
// from Run, on a goroutine of its own, so that a slow API server never
// blocks the component that records (past a queue of 1000, events are
// dropped, with a warning); Limit rate-limits the posting.
package record

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// queueSize bounds the events waiting to be sent; when the API server is
// slow, events are dropped rather than slowing the component, as in
// client-go's broadcaster.
const queueSize = 1000

// Recorder posts Events asynchronously on behalf of one component.
type Recorder struct {
	client    *client.Client
	component string // source.component, e.g. "default-scheduler"
	host      string // source.host, e.g. the kubelet's node
	log       *slog.Logger
	clock     clock.PassiveClock      // stamps firstTimestamp and lastTimestamp
	events    chan *corev1.Event      // sent by Event, drained by Run
	limiter   flowcontrol.RateLimiter // nil: send as fast as the API server takes them
	dropped   *atomic.Int64           // events dropped since the last warning
}

// New returns a recorder on the real clock; call Run to start sending.
func New(c *client.Client, component, host string, log *slog.Logger) *Recorder {
	return &Recorder{client: c, component: component, host: host, log: log, clock: clock.RealClock{},
		events: make(chan *corev1.Event, queueSize), dropped: &atomic.Int64{}}
}

// WithClock returns a recorder that stamps its events with clk's time and
// shares r's queue, like WithComponent: so that a component running on an
// injected clock (a fake one in tests) dates its events by that clock too.
// An event is named after its object and the time in nanoseconds, as in
// Kubernetes, so two events of one object at the same instant of a clock
// that does not move share a name, and the API server keeps the first.
func (r *Recorder) WithClock(clk clock.PassiveClock) *Recorder {
	c := *r
	c.clock = clk
	return &c
}

// WithComponent returns a recorder that signs its events as component
// and shares r's queue (r's Run sends them): one per controller of the
// controller manager, so `kubectl describe` says which controller acted
// ("deployment-controller"), as in Kubernetes.
func (r *Recorder) WithComponent(component string) *Recorder {
	c := *r
	c.component = component
	return &c
}

// Limit makes Run send at most qps events a second, with bursts of
// burst: the kubelet's --event-qps and --event-burst (50 and 100), so
// that a node starting thousands of pods does not spend its time, and
// the API server's, on events. Past the queue, events are dropped. Call
// it before Run; the recorders made from r share its limit.
func (r *Recorder) Limit(qps float32, burst int) *Recorder {
	r.limiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	return r
}

// WithHost returns a recorder that signs its events as from host (the
// source.host, a kubelet's node) and shares r's queue: one per node of a
// kubelet process that runs many.
func (r *Recorder) WithHost(host string) *Recorder {
	c := *r
	c.host = host
	return &c
}

// Event records that something of eventType (Normal or Warning) happened to
// obj, for reason, described by the message.
func (r *Recorder) Event(obj runtime.Object, eventType, reason, messageFmt string, args ...any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	now := metav1.NewTime(r.clock.Now())
	ns := m.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault // events about nodes live in "default", as in Kubernetes
	}
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", m.GetName(), now.UnixNano()), Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String(),
			Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion()},
		Reason: reason, Message: fmt.Sprintf(messageFmt, args...), Type: eventType,
		Source:         corev1.EventSource{Component: r.component, Host: r.host},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		ReportingController: r.component, ReportingInstance: r.host,
	}
	select {
	case r.events <- ev:
	default:
		// Warn once per burst of drops, not once per event.
		if r.dropped.Add(1) == 1 {
			r.log.Warn("events dropped: the queue is full", "reason", reason, "object", client.KeyOf(obj))
		}
	}
}

// maxSeen bounds the events remembered for aggregation, as client-go's
// EventCorrelator keeps an LRU cache of 4096; past it the memory starts
// again, and an old event's repeat is a new event.
const maxSeen = 4096

// seenEvent is an event already sent: what its repeats update.
type seenEvent struct {
	name  string
	count int32
}

// Run sends queued events until ctx ends. An event that repeats one
// already sent (the same object, type, reason, message and source) is
// not a new Event: the first one's count and lastTimestamp are patched,
// which `kubectl describe` shows as "(x3 over 40s)", as client-go's
// EventCorrelator does.
func (r *Recorder) Run(ctx context.Context) {
	seen := map[string]*seenEvent{}
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-r.events:
			if r.limiter != nil {
				r.limiter.Accept()
			}
			if n := r.dropped.Swap(0); n > 1 {
				r.log.Warn("events were dropped: the queue was full", "dropped", n)
			}
			key := aggregationKey(ev)
			if prev, ok := seen[key]; ok {
				prev.count++
				patch, _ := json.Marshal(map[string]any{"count": prev.count, "lastTimestamp": ev.LastTimestamp})
				err := r.client.Patch(ctx, client.Events, ev.Namespace, prev.name, types.MergePatchType, patch, nil)
				if err == nil || ctx.Err() != nil {
					continue
				}
				// Gone (events expire): send it as a new one.
				delete(seen, key)
			}
			if err := r.client.Create(ctx, client.Events, ev.Namespace, ev, nil); err != nil {
				if ctx.Err() == nil {
					r.log.Debug("event not recorded", "reason", ev.Reason, "err", err)
				}
				continue
			}
			if len(seen) >= maxSeen {
				clear(seen)
			}
			seen[key] = &seenEvent{name: ev.Name, count: ev.Count}
		}
	}
}

// aggregationKey is what makes two events the same one.
func aggregationKey(ev *corev1.Event) string {
	o := ev.InvolvedObject
	return strings.Join([]string{ev.Source.Component, ev.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID),
		ev.Type, ev.Reason, ev.Message}, "\x00")
}
