package client

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// The informer tests play the API server by hand: every request the
// informer sends arrives on the test goroutine as a call, which the test
// inspects (is it a list or a watch? from which resourceVersion?) and
// answers line by line. Nothing happens unless the test makes it happen,
// so the tests need no sleeps, only deadlines on their waits.

// wait bounds every wait of these tests; it is only reached when a test fails.
const wait = 5 * time.Second

// fakeServer is a scripted API server.
type fakeServer struct {
	t     *testing.T
	url   string
	callc chan *call    // handler → test: one per request
	quitc chan struct{} // closed at cleanup: handlers return
}

// call is one request waiting for the test to answer it.
type call struct {
	t     *testing.T
	path  string
	query url.Values
	// doc carries writes from the test to the handler goroutine, which
	// alone touches the ResponseWriter; the test closes it to end the
	// response (for a watch: a normal end of stream).
	doc chan func(http.ResponseWriter)
}

func newFakeServer(t *testing.T) *fakeServer {
	s := &fakeServer{t: t, callc: make(chan *call), quitc: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(s.quitc) }) // runs first: lets handlers return so Close can finish
	s.url = srv.URL
	return s
}

func (s *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	c := &call{t: s.t, path: r.URL.Path, query: r.URL.Query(), doc: make(chan func(http.ResponseWriter))}
	select {
	case s.callc <- c:
	case <-r.Context().Done():
		return
	case <-s.quitc:
		return
	}
	for {
		select {
		case write, ok := <-c.doc:
			if !ok {
				return
			}
			write(w)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		case <-s.quitc:
			return
		}
	}
}

// next returns the informer's next request.
func (s *fakeServer) next() *call {
	s.t.Helper()
	select {
	case c := <-s.callc:
		return c
	case <-time.After(wait):
		s.t.Fatalf("no request from the informer within %v", wait)
		return nil
	}
}

// nextList returns the next request and fails unless it is a list.
func (s *fakeServer) nextList() *call {
	s.t.Helper()
	c := s.next()
	if c.isWatch() {
		s.t.Fatalf("got a watch from rv %q, want a list", c.query.Get("resourceVersion"))
	}
	return c
}

// nextWatch returns the next request and fails unless it is a watch from rv.
func (s *fakeServer) nextWatch(rv string) *call {
	s.t.Helper()
	c := s.next()
	if !c.isWatch() {
		s.t.Fatalf("got a list (%s?%s), want a watch from rv %s", c.path, c.query.Encode(), rv)
	}
	if got := c.query.Get("resourceVersion"); got != rv {
		s.t.Fatalf("watch from resourceVersion %q, want %q", got, rv)
	}
	if got := c.query.Get("allowWatchBookmarks"); got != "true" {
		s.t.Errorf("allowWatchBookmarks = %q, want true", got)
	}
	return c
}

// expectNoCall checks that the informer has not sent another request.
// It is only meaningful once the informer is known to be blocked (on the
// clock, or on a stream): a request it was about to send would otherwise
// arrive after the check.
func (s *fakeServer) expectNoCall(why string) {
	s.t.Helper()
	select {
	case c := <-s.callc:
		s.t.Fatalf("%s: unexpected request %s?%s", why, c.path, c.query.Encode())
	default:
	}
}

func (c *call) isWatch() bool { return c.query.Get("watch") == "true" }

func (c *call) write(f func(http.ResponseWriter)) {
	c.t.Helper()
	select {
	case c.doc <- f:
	case <-time.After(wait):
		c.t.Fatalf("the informer stopped reading %s", c.path)
	}
}

// reply answers with one JSON document and ends the response.
func (c *call) reply(code int, body any) {
	c.t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		w.Write(data)
	})
	close(c.doc)
}

// list answers a list with the pods and the list's resourceVersion.
func (c *call) list(rv string, pods ...*corev1.Pod) {
	c.t.Helper()
	l := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	c.reply(http.StatusOK, l)
}

// stream starts a watch response: the informer's Watch returns.
func (c *call) stream() {
	c.t.Helper()
	c.write(func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
	})
}

// send writes one watch event, one JSON object per line as the API server does.
func (c *call) send(typ watch.EventType, obj any) {
	c.t.Helper()
	data, err := json.Marshal(map[string]any{"type": typ, "object": obj})
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(func(w http.ResponseWriter) { w.Write(append(data, '\n')) })
}

// end closes the stream normally, as the server does when timeoutSeconds pass.
func (c *call) end() { close(c.doc) }

// pod is a pod as the server sends it, at resourceVersion rv.
func pod(name string, rv int) *corev1.Pod {
	p := testPod("default", name, "")
	p.ResourceVersion = strconv.Itoa(rv)
	return p
}

// expired is the Status the API server sends for a compacted resourceVersion.
var expired = &metav1.Status{
	TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
	Status:   metav1.StatusFailure, Reason: metav1.StatusReasonExpired, Code: http.StatusGone,
	Message: "too old resource version: 5 (20)",
}

// recorder is a Handler that writes what it is told as lines on a channel
// ("add default/a@3", "update default/a@3→7", "delete default/b@4").
type recorder chan string

func (r recorder) handler() Handler {
	rv := func(o runtime.Object) string { return KeyOf(o) + "@" + o.(*corev1.Pod).ResourceVersion }
	return Handler{
		OnAdd: func(o runtime.Object) { r <- "add " + rv(o) },
		OnUpdate: func(old, o runtime.Object) {
			r <- "update " + rv(old) + "→" + o.(*corev1.Pod).ResourceVersion
		},
		OnDelete: func(o runtime.Object) { r <- "delete " + rv(o) },
	}
}

// expect reads len(want) notifications and compares them, in order.
func (r recorder) expect(t *testing.T, want ...string) {
	t.Helper()
	var got []string
	for range want {
		select {
		case s := <-r:
			got = append(got, s)
		case <-time.After(wait):
			t.Fatalf("handlers saw %q, then nothing within %v; want %q", got, wait, want)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("handlers saw %q, want %q", got, want)
	}
}

// expectUnordered is expect for notifications whose order is not defined
// (the deletes of a re-list come from a map).
func (r recorder) expectUnordered(t *testing.T, want ...string) {
	t.Helper()
	got := map[string]int{}
	for range want {
		select {
		case s := <-r:
			got[s]++
		case <-time.After(wait):
			t.Fatalf("handlers saw %v, then nothing within %v; want %q", got, wait, want)
		}
	}
	for _, w := range want {
		got[w]--
	}
	for s, n := range got {
		if n != 0 {
			t.Fatalf("handlers saw %q %+d times more than expected; want %q", s, n, want)
		}
	}
}

func (r recorder) expectNothing(t *testing.T) {
	t.Helper()
	select {
	case s := <-r:
		t.Fatalf("unexpected notification %q", s)
	default:
	}
}

// cacheState is the cache as key@rv, sorted by key.
func cacheState(c *Cache) []string {
	out := []string{}
	for _, o := range c.List() {
		out = append(out, KeyOf(o)+"@"+o.(*corev1.Pod).ResourceVersion)
	}
	return out
}

// backoffClock is a fake clock that tells the test each time the informer
// starts a backoff timer, so that the test steps the clock only once the
// informer waits on it.
type backoffClock struct {
	*clocktesting.FakeClock
	// timerc: After → test, one per timer started. Buffered so that an
	// informer whose timers the test does not wait for never blocks.
	timerc chan time.Duration
}

func (c *backoffClock) After(d time.Duration) <-chan time.Time {
	ch := c.FakeClock.After(d)
	c.timerc <- d
	return ch
}

// startInformer runs a pod informer against s with a fake clock, and stops
// it (waiting for Run to return) when the test ends.
func startInformer(t *testing.T, s *fakeServer) (*Informer, recorder, *backoffClock) {
	t.Helper()
	inf := NewInformer(New(s.url, "informer-test"), Pods, "", ListOptions{}, slog.New(slog.DiscardHandler))
	clk := &backoffClock{FakeClock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), timerc: make(chan time.Duration, 100)}
	inf.clock = clk
	rec := make(recorder, 100)
	inf.AddHandler(rec.handler())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(wait):
			t.Errorf("Run did not return within %v of its context being cancelled", wait)
		}
	})
	return inf, rec, clk
}

func TestInformerListsThenWatchesFromTheListsResourceVersion(t *testing.T) {
	s := newFakeServer(t)
	inf, rec, _ := startInformer(t, s)

	l := s.nextList()
	if l.path != "/api/v1/pods" {
		t.Errorf("list path = %s, want /api/v1/pods", l.path)
	}
	if inf.HasSynced() {
		t.Error("HasSynced before the first list was answered")
	}
	l.list("5", pod("a", 3), pod("b", 4))
	rec.expect(t, "add default/a@3", "add default/b@4")

	w := s.nextWatch("5")
	if !inf.HasSynced() {
		t.Error("HasSynced is false after the first list")
	}
	if w.path != "/api/v1/pods" {
		t.Errorf("watch path = %s, want /api/v1/pods", w.path)
	}
	// Kubernetes' reflector asks for 5 to 10 minute watches.
	if ts, _ := strconv.Atoi(w.query.Get("timeoutSeconds")); ts < 300 || ts >= 600 {
		t.Errorf("timeoutSeconds = %q, want 300..599", w.query.Get("timeoutSeconds"))
	}
	w.stream()
	w.send(watch.Added, pod("c", 6))
	w.send(watch.Modified, pod("a", 7))
	w.send(watch.Deleted, pod("b", 8))
	rec.expect(t, "add default/c@6", "update default/a@3→7", "delete default/b@8")

	if got, want := cacheState(inf.Cache()), []string{"default/a@7", "default/c@6"}; !reflect.DeepEqual(got, want) {
		t.Errorf("cache = %v, want the server's state %v", got, want)
	}
}

func TestInformerRelistsAtOnceWhenItsResourceVersionExpired(t *testing.T) {
	tests := []struct {
		name string
		// expire tells the informer, through its watch from rv 5, that the
		// history after 5 is gone; it may first deliver an event.
		expire func(w *call)
		// seen: the notifications of the events sent before the error.
		seen []string
	}{
		{
			name: "the watch stream ends with an ERROR event carrying 410 Expired",
			expire: func(w *call) {
				w.stream()
				w.send(watch.Added, pod("c", 6))
				w.send(watch.Error, expired)
			},
			seen: []string{"add default/c@6"},
		},
		{
			name:   "the watch request itself is answered 410 with a Status",
			expire: func(w *call) { w.reply(http.StatusGone, expired) },
		},
		{
			name: "the watch request is answered 410 with a body that is not a Status",
			expire: func(w *call) {
				w.write(func(rw http.ResponseWriter) {
					rw.WriteHeader(http.StatusGone)
					fmt.Fprint(rw, "gone")
				})
				w.end()
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeServer(t)
			inf, rec, clk := startInformer(t, s)
			s.nextList().list("5", pod("a", 3), pod("b", 4))
			rec.expect(t, "add default/a@3", "add default/b@4")

			tt.expire(s.nextWatch("5"))
			rec.expect(t, tt.seen...)

			// The fake clock never moves, so a re-list that arrives at
			// all proves the informer did not back off first.
			l := s.nextList()
			if clk.HasWaiters() {
				t.Error("the informer set a backoff timer before re-listing an expired resourceVersion")
			}
			// Meanwhile a (and c) were deleted, b changed and d was created.
			l.list("20", pod("b", 9), pod("d", 15))
			rec.expect(t, "update default/b@4→9", "add default/d@15")
			deleted := []string{"delete default/a@3"}
			if len(tt.seen) > 0 {
				deleted = append(deleted, "delete default/c@6")
			}
			rec.expectUnordered(t, deleted...)

			s.nextWatch("20").stream()
			rec.expectNothing(t)
			if got, want := cacheState(inf.Cache()), []string{"default/b@9", "default/d@15"}; !reflect.DeepEqual(got, want) {
				t.Errorf("cache after re-list = %v, want the server's state %v", got, want)
			}
		})
	}
}

func TestInformerResumesABrokenWatchFromTheLastResourceVersionWithoutRelisting(t *testing.T) {
	s := newFakeServer(t)
	inf, rec, _ := startInformer(t, s)
	s.nextList().list("5", pod("a", 3))
	rec.expect(t, "add default/a@3")

	w := s.nextWatch("5")
	w.stream()
	w.send(watch.Added, pod("b", 6))
	w.send(watch.Modified, pod("a", 7))
	w.end()
	rec.expect(t, "add default/b@6", "update default/a@3→7")

	// The next request must be a watch from 7: nextWatch fails on a list.
	w = s.nextWatch("7")
	w.stream()
	w.send(watch.Deleted, pod("b", 8))
	rec.expect(t, "delete default/b@8")
	w.end()

	s.nextWatch("8").stream()
	rec.expectNothing(t)
	if got, want := cacheState(inf.Cache()), []string{"default/a@7"}; !reflect.DeepEqual(got, want) {
		t.Errorf("cache = %v, want %v", got, want)
	}
}

func TestInformerBookmarksMoveTheResumeResourceVersion(t *testing.T) {
	s := newFakeServer(t)
	inf, rec, _ := startInformer(t, s)
	s.nextList().list("5", pod("a", 3))
	rec.expect(t, "add default/a@3")

	w := s.nextWatch("5")
	w.stream()
	// A bookmark is an object of the watched kind with only a
	// resourceVersion: "nothing for you up to 12".
	w.send(watch.Bookmark, map[string]any{"kind": "Pod", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": "12"}})
	w.end()

	s.nextWatch("12").stream()
	// The bookmark was read before the stream ended, so any notification
	// for it would be on the channel by now.
	rec.expectNothing(t)
	if got, want := cacheState(inf.Cache()), []string{"default/a@3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("cache = %v, want a bookmark to change nothing: %v", got, want)
	}
}

// waitForTimer waits until the informer has started a timer on the fake
// clock.
func waitForTimer(t *testing.T, clk *backoffClock) {
	t.Helper()
	select {
	case <-clk.timerc:
	case <-time.After(wait):
		t.Fatalf("the informer did not start a backoff timer within %v", wait)
	}
}

func TestInformerBacksOffWhenTheListFails(t *testing.T) {
	s := newFakeServer(t)
	_, rec, clk := startInformer(t, s)
	// Backoff is 1s, 2s, 4s ... each plus up to 20% jitter.
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		s.nextList().reply(http.StatusInternalServerError, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError, Code: 500, Message: "etcd unavailable"})
		expectBackoff(t, s, clk, d)
	}
	s.nextList().list("5", pod("a", 3))
	rec.expect(t, "add default/a@3")
	s.nextWatch("5").stream()
}

func TestInformerBacksOffAndRelistsWhenTheWatchFailsForAnotherReason(t *testing.T) {
	tests := []struct {
		name string
		fail func(w *call)
	}{
		{
			name: "the watch request is answered 500",
			fail: func(w *call) { w.reply(http.StatusInternalServerError, "boom") },
		},
		{
			name: "the stream ends with an ERROR event that is not 410",
			fail: func(w *call) {
				w.stream()
				w.send(watch.Error, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
					Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError, Code: 500, Message: "boom"})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFakeServer(t)
			_, rec, clk := startInformer(t, s)
			s.nextList().list("5", pod("a", 3))
			rec.expect(t, "add default/a@3")
			tt.fail(s.nextWatch("5"))

			expectBackoff(t, s, clk, time.Second)
			// After an unknown error the informer cannot tell what it
			// missed, so it lists again.
			s.nextList().list("9", pod("a", 3))
			rec.expect(t, "update default/a@3→3")
			s.nextWatch("9").stream()
		})
	}
}

// expectBackoff checks that the informer, having just failed, waits at
// least d (and at most d plus 20% jitter) before its next request.
func expectBackoff(t *testing.T, s *fakeServer, clk *backoffClock, d time.Duration) {
	t.Helper()
	waitForTimer(t, clk)
	clk.Step(d - time.Millisecond)
	if !clk.HasWaiters() {
		t.Fatalf("the informer retried before %v", d)
	}
	s.expectNoCall(fmt.Sprintf("%v into a backoff of %v", d-time.Millisecond, d))
	clk.Step(d/5 + time.Millisecond)
	if clk.HasWaiters() {
		t.Fatalf("the informer still waits after %v, more than %v plus jitter", d*6/5, d)
	}
}

func TestInformerBackoffKeepsGrowingWhileEveryWatchFailsAtOnce(t *testing.T) {
	// The list works but the watch never does: the informer must not fall
	// into re-listing every second (a full LIST each time), the backoff
	// doubles as for any other repeated failure.
	s := newFakeServer(t)
	_, rec, clk := startInformer(t, s)
	for i, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		s.nextList().list("5", pod("a", 3))
		if i == 0 {
			rec.expect(t, "add default/a@3")
		} else {
			rec.expect(t, "update default/a@3→3")
		}
		s.nextWatch("5").reply(http.StatusInternalServerError, "watch is broken")
		expectBackoff(t, s, clk, d)
	}
	s.nextList()
}

func TestInformerBackoffStartsOverAfterAWatchThatWorked(t *testing.T) {
	s := newFakeServer(t)
	_, rec, clk := startInformer(t, s)
	fail := func(c *call) { c.reply(http.StatusServiceUnavailable, "starting") }
	fail(s.nextList())
	expectBackoff(t, s, clk, time.Second)
	fail(s.nextList())
	expectBackoff(t, s, clk, 2*time.Second)

	s.nextList().list("5", pod("a", 3))
	rec.expect(t, "add default/a@3")
	w := s.nextWatch("5")
	w.stream()
	w.send(watch.Added, pod("b", 6))
	rec.expect(t, "add default/b@6")
	w.send(watch.Error, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError, Code: 500, Message: "etcd restarted"})

	// The watch delivered an event, so the cluster was healthy: the
	// failures before it no longer count.
	expectBackoff(t, s, clk, time.Second)
	s.nextList()
}
