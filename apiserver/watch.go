package apiserver

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/store"
)

// bookmarkInterval: how often a watcher that asked for bookmarks is told
// "you have everything up to rv". Kubernetes sends one about every minute;
// a shorter interval costs one small line and lets clients resume closer to
// now after a reconnect.
const bookmarkInterval = 10 * time.Second

// watchRequest is a parsed ?watch=true.
type watchRequest struct {
	filter            *filter
	resourceVersion   string
	allowBookmarks    bool
	sendInitialEvents bool
	timeout           time.Duration
}

// source yields a watcher's events: from the watch cache, or from its own
// etcd watch when it asks for a revision older than the cache holds.
type source interface {
	// poll returns the events available now, a channel that fires when
	// there may be more (at once if some are already waiting), and the
	// revision the watcher is complete up to once it has the events. err
	// ends the watch with an ERROR event.
	poll() (evs []*watchEvent, wait <-chan struct{}, rev int64, err error)
}

// errLost ends a watch quietly: the watcher fell out of the ring and resumes
// from its last resourceVersion, as any client does when a stream ends.
var errLost = errors.New("watcher fell behind")

// serveWatch streams WatchEvents, flushed as they come (seed steps 5, 9
// and 12: the components learn of changes this way): one JSON object per
// line, or length-prefixed protobuf frames, as the client's Accept
// negotiates (watchencoding.go).
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, st *Storage, req watchRequest) {
	mt, err := negotiateStream(r, st.res)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), req.timeout)
	defer cancel()
	initial := req.resourceVersion == "" || req.resourceVersion == "0"
	var fromRev int64
	var initialObjs []runtime.Object
	if initial {
		// Unset or "0": the current state first, as ADDED events.
		objs, res, err := st.List(ctx, req.filter.namespace, store.ListOptions{})
		if err != nil {
			writeError(w, err)
			return
		}
		initialObjs, fromRev = objs, res.Rev
	} else {
		rv, err := strconv.ParseInt(req.resourceVersion, 10, 64)
		if err != nil {
			writeError(w, badRequest("invalid resourceVersion %q", req.resourceVersion))
			return
		}
		fromRev = rv
	}

	w.Header().Set("Content-Type", mt.streamContentType())
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := streamEncodingOf(mt)
	out := &eventWriter{enc: enc, envelope: newEventEnvelope(enc, w), res: st.res, table: mt.table, tableObject: r.URL.Query().Get("includeObject"), now: s.clock.Now,
		sent: s.metrics.watchEvents.WithLabelValues(st.res.GroupVersion.Group, st.res.GroupVersion.Version, st.res.Kind)}
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}

	for _, obj := range initialObjs {
		if req.filter.matches(obj) {
			out.object("ADDED", obj)
		}
	}
	if req.sendInitialEvents {
		out.bookmark(fromRev, true)
	}
	flush()

	src := s.sourceFor(ctx, st, fromRev)
	bookmarks := s.clock.NewTicker(bookmarkInterval)
	defer bookmarks.Stop()
	for {
		evs, wait, rev, err := src.poll()
		if errors.Is(err, errLost) {
			return
		}
		if err != nil {
			out.status(err)
			flush()
			return
		}
		for _, ev := range evs {
			out.event(ev, req.filter)
		}
		if out.err != nil {
			return // the client went away
		}
		// One flush for the whole batch, then wait. wait was taken with
		// the batch, so a change since is not missed: it is already
		// closed (as it is when the batch was cut short at maxBatch).
		flush()
		select {
		case <-ctx.Done():
			return
		case <-wait:
		case <-bookmarks.C():
			if req.allowBookmarks && rev > 0 {
				out.bookmark(rev, false)
			}
		}
	}
}

func (s *Server) sourceFor(ctx context.Context, st *Storage, fromRev int64) source {
	if c := s.served.Load().caches[st.res]; c != nil {
		if seq, ok := c.start(fromRev); ok {
			return &cacheSource{cache: c, seq: seq, after: fromRev}
		}
	}
	return newEtcdSource(ctx, st, fromRev)
}

// cacheSource reads the shared ring.
type cacheSource struct {
	cache *watchCache
	seq   uint64
	// after is the revision the watch starts from. A list read from etcd
	// can be ahead of the cache: events up to it still arrive in the ring
	// after start and are skipped, so the client never goes back in time.
	after int64
}

func (c *cacheSource) poll() ([]*watchEvent, <-chan struct{}, int64, error) {
	evs, next, wait, rev, lost := c.cache.read(c.seq)
	if lost {
		return nil, nil, 0, errLost
	}
	c.seq = next
	if len(evs) == maxBatch {
		wait = closed // more are waiting in the ring
	}
	for len(evs) > 0 && evs[0].rev <= c.after {
		evs = evs[1:]
	}
	return evs, wait, max(rev, c.after), nil
}

// closed is a channel that is always ready.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// etcdSource is a private etcd watch, for revisions the cache lacks; etcd
// itself answers "compacted" when they are older than its history.
type etcdSource struct {
	mu      sync.Mutex
	pending []*watchEvent
	rev     int64
	err     error
	done    bool
	// signal has room for one token: the feeding goroutine drops a token
	// when it appends, poll takes it by waiting.
	signal chan struct{}
}

func newEtcdSource(ctx context.Context, st *Storage, fromRev int64) *etcdSource {
	src := &etcdSource{signal: make(chan struct{}, 1), rev: fromRev}
	events, errf := st.store.Watch(ctx, store.Prefix(st.res.storageName(), ""), fromRev)
	go func() { // owner: this watcher; ends when ctx ends or etcd fails
		for ev := range events {
			var we *watchEvent
			var err error
			if ev.Type != store.Progress {
				we, err = st.decodeEvent(ev)
			}
			src.mu.Lock()
			if src.err != nil {
				src.mu.Unlock()
				continue // the watch ends at the event it could not decode: nothing after it may pass
			}
			switch {
			case err != nil:
				src.err = err
			case we != nil:
				src.pending = append(src.pending, we)
				src.rev = ev.Rev
			default:
				src.rev = ev.Rev // progress
			}
			src.mu.Unlock()
			src.notify()
		}
		src.mu.Lock()
		if err := errf(); err != nil && src.err == nil {
			src.err = storeError(err, st.res.GroupResource(), "")
		}
		src.done = true
		src.mu.Unlock()
		src.notify()
	}()
	return src
}

func (e *etcdSource) notify() {
	select {
	case e.signal <- struct{}{}:
	default:
	}
}

func (e *etcdSource) poll() ([]*watchEvent, <-chan struct{}, int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.pending) > 0 {
		evs := e.pending
		e.pending = nil
		return evs, e.signal, e.rev, nil
	}
	if e.err != nil {
		return nil, nil, 0, e.err
	}
	if e.done {
		return nil, nil, 0, errLost
	}
	return nil, e.signal, e.rev, nil
}

// eventWriter writes WatchEvents in one stream encoding. err remembers
// the first error: the client is gone (or an object could not be
// encoded) and the watch ends, freeing everything it held.
type eventWriter struct {
	enc      streamEncoding
	envelope *eventEnvelope
	res      *Resource
	err      error
	// table, for `kubectl get -w`, sends each object as a one-row Table
	// (columns in the first only) instead of the shared encoded bytes.
	table       bool
	tableSent   bool
	tableObject string
	now         func() time.Time
	// sent counts the events written (apiserver_watch_events_total).
	sent prometheus.Counter
}

// event applies Kubernetes' rule for selectors: an object that starts to
// match is ADDED, one that stops matching is DELETED (with its last state
// that matched), and one that never matched is not sent.
func (o *eventWriter) event(ev *watchEvent, f *filter) {
	cur, old := f.matches(ev.obj), f.matches(ev.prev)
	if cur || old {
		o.sent.Inc()
	}
	switch {
	case cur && old && o.table:
		o.object("MODIFIED", ev.obj)
	case cur && old:
		o.encoded("MODIFIED", ev.objBytes)
	case cur && o.table:
		o.object("ADDED", ev.obj)
	case cur:
		o.encoded("ADDED", ev.objBytes)
	case old && o.table:
		o.object("DELETED", ev.prev)
	case old:
		o.encoded("DELETED", ev.prevBytes)
	}
}

func (o *eventWriter) object(typ string, obj runtime.Object) {
	if o.table && typ != "BOOKMARK" && typ != "ERROR" {
		t := newTable(o.res, []runtime.Object{obj}, o.tableObject, o.now(), !o.tableSent)
		t.ResourceVersion = rvOf(obj)
		o.tableSent = true
		obj = t
	}
	if o.err != nil {
		return
	}
	data, err := o.enc.encode(obj)
	if err != nil {
		o.err = err
		return
	}
	o.line(typ, data)
}

// encoded writes an event whose object the watch cache has encoded, or
// encodes now, once for every watcher of this encoding.
func (o *eventWriter) encoded(typ string, bytesOf func(streamEncoding) ([]byte, error)) {
	if o.err != nil {
		return
	}
	data, err := bytesOf(o.enc)
	if err != nil {
		o.err = err
		return
	}
	o.line(typ, data)
}

// bookmark tells the client it has every change up to rev. The one that
// ends the initial events of a watch-list carries the
// k8s.io/initial-events-end annotation.
func (o *eventWriter) bookmark(rev int64, initialEnd bool) {
	obj := o.res.New()
	obj.GetObjectKind().SetGroupVersionKind(o.res.GVK())
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	if initialEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	o.object("BOOKMARK", obj)
}

// status sends an ERROR event carrying a Status, e.g. 410 Expired.
func (o *eventWriter) status(err error) {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		err = apierrors.NewInternalError(err)
	}
	o.object("ERROR", asStatus(err))
}

func (o *eventWriter) line(typ string, obj []byte) {
	if o.err != nil {
		return
	}
	o.err = o.envelope.write(typ, obj)
}

// watchTimeout is Kubernetes' default when a watch names none: between 30
// and 60 minutes, randomised so that clients do not all reconnect at once.
func watchTimeout(seconds string) time.Duration {
	if n, err := strconv.ParseInt(seconds, 10, 64); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 30*time.Minute + time.Duration(rand.Int64N(int64(30*time.Minute)))
}
