package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Eight clients create ConfigMaps as fast as they can, spread over the
// three API servers, and a watch runs through one of them; that server's
// host, the etcd leader's, is killed (SIGKILL) mid-load. The clients on
// it fail over to the two others, as a client behind a load balancer
// would, and retry what got no answer; the watch resumes on another
// server from the last resourceVersion it saw. Afterwards every create
// that was acknowledged is there, read through each remaining server,
// nothing else is, and the watch saw each one ADDED exactly once, in
// resourceVersion order.
func TestHAEightWritersLoseNothingWhenAnAPIServerIsKilled(t *testing.T) {
	t.Parallel()
	etcdctl := findEtcdctl(t)
	ms := startHACluster(t)
	// The leader's host: its loss costs an election besides the server.
	victim := etcdLeader(t, etcdctl, ms)
	t.Logf("the watch runs through %s, the etcd leader's host, which is killed mid-load", ms[victim].name)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	if code := ms[victim].do("GET", "/api/v1/namespaces/default/configmaps", "", nil, &list); code != 200 {
		t.Fatalf("list configmaps: %d", code)
	}
	w := &resumingWatch{ms: ms, path: "/api/v1/namespaces/default/configmaps", rv: list.Metadata.ResourceVersion, server: victim}
	first, err := openWatch(ctx, ms[victim].URL+w.path+"?resourceVersion="+w.rv)
	if err != nil {
		t.Fatal(err)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var watching sync.WaitGroup
	watching.Go(func() { w.run(watchCtx, first) })
	defer func() { stopWatch(); watching.Wait() }()

	const writers = 8
	began := time.Now()
	load, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	ws := make([]*failoverWriter, writers)
	var writing sync.WaitGroup
	for i := range ws {
		ws[i] = &failoverWriter{t: t, ms: ms, id: i, server: i % 3}
		writing.Go(func() { ws[i].run(load) })
	}
	acked := func() (n int) {
		for _, fw := range ws {
			n += fw.ackedCount()
		}
		return n
	}
	testserver.EventuallyWithin(t, 60*time.Second, "3 s of load and 100 creates acknowledged with three servers", func() (bool, string) {
		n := acked()
		return time.Since(began) >= 3*time.Second && n >= 100, fmt.Sprintf("%d acknowledged after %v", n, time.Since(began).Round(time.Millisecond))
	})
	before := acked()
	killed := time.Now()
	ms[victim].kill()
	t.Logf("killed %s (API server and etcd member, SIGKILL) %v into the load, %d creates acknowledged", ms[victim].name,
		killed.Sub(began).Round(time.Millisecond), before)
	testserver.EventuallyWithin(t, 60*time.Second, "5 s of load after the kill, 200 more creates acknowledged, the watch resumed", func() (bool, string) {
		n := acked() - before
		resumed := w.resumedOn() >= 0
		return time.Since(killed) >= 5*time.Second && n >= 200 && resumed, fmt.Sprintf("%d acknowledged after the kill, resumed %v", n, resumed)
	})
	stopLoad()
	writing.Wait()
	ended := time.Now()

	// What the writers were told.
	want := map[string]string{} // name → resourceVersion acknowledged
	var all []ackedWrite
	var failed, retried int
	var slowest time.Duration
	for _, fw := range ws {
		for _, a := range fw.acked {
			want[a.name] = a.rv
			all = append(all, a)
			if a.byRetry {
				retried++
			}
			slowest = max(slowest, a.at.Sub(a.first))
		}
		failed += fw.failed
		for _, e := range fw.errs {
			t.Error(e)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	var stall time.Duration
	var stallAt time.Time
	for i := 1; i < len(all); i++ {
		if d := all[i].at.Sub(all[i-1].at); d > stall {
			stall, stallAt = d, all[i-1].at
		}
	}
	after := len(all) - before
	t.Logf("%d creates acknowledged (%d of them by a retry that met AlreadyExists after an unanswered attempt), %d attempts failed (refused, broken, 5xx)",
		len(all), retried, failed)
	t.Logf("throughput: %.0f creates/s with three servers, %.0f/s in the %v after the kill; longest stall (no create acknowledged anywhere) %v, %v after the kill; slowest create (first attempt to acknowledgement) %v",
		float64(before)/killed.Sub(began).Seconds(), float64(after)/ended.Sub(killed).Seconds(), ended.Sub(killed).Round(time.Millisecond),
		stall.Round(time.Millisecond), stallAt.Sub(killed).Round(time.Millisecond), slowest.Round(time.Millisecond))

	// Every acknowledged create is there through each remaining server,
	// with the resourceVersion it was acknowledged with, and nothing
	// else the writers sent.
	var listed map[string]string
	for i, m := range ms {
		if i == victim {
			continue
		}
		var l struct {
			Metadata struct{ ResourceVersion string }
			Items    []struct {
				Metadata struct{ Name, ResourceVersion string }
			}
		}
		if code := m.do("GET", "/api/v1/namespaces/default/configmaps", "", nil, &l); code != 200 {
			t.Fatalf("%s: list configmaps: %d", m.name, code)
		}
		have := map[string]string{}
		for _, it := range l.Items {
			if strings.HasPrefix(it.Metadata.Name, "load-") {
				have[it.Metadata.Name] = it.Metadata.ResourceVersion
			}
		}
		var lost, wrong, extra []string
		for name, rv := range want {
			switch got, ok := have[name]; {
			case !ok:
				lost = append(lost, name)
			case got != rv:
				wrong = append(wrong, fmt.Sprintf("%s rv %s, acknowledged %s", name, got, rv))
			}
		}
		for name := range have {
			if _, ok := want[name]; !ok {
				extra = append(extra, name)
			}
		}
		if len(lost)+len(wrong)+len(extra) > 0 {
			t.Errorf("%s lists %d: acknowledged but missing %v; with another resourceVersion %v; never acknowledged %v", m.name, len(have), lost, wrong, extra)
		}
		listed = have
	}

	// The watch saw each of them ADDED once, whether before the kill on
	// the dead server or after it on another, in resourceVersion order.
	testserver.EventuallyWithin(t, 30*time.Second, "the watch saw every acknowledged create", func() (bool, string) {
		seen := w.added()
		return len(seen) >= len(listed), fmt.Sprintf("%d of %d", len(seen), len(listed))
	})
	w.mu.Lock()
	events, errs, resumes := slices.Clone(w.events), slices.Clone(w.errs), slices.Clone(w.resumes)
	w.mu.Unlock()
	for _, e := range errs {
		t.Errorf("watch: %s", e)
	}
	count := map[string]int{}
	var onVictim int
	var prev int64
	for i, ev := range events {
		if ev.typ != "ADDED" {
			t.Errorf("watch event %d: %s %s, want only ADDED", i, ev.typ, ev.name)
		}
		count[ev.name]++
		if ev.rv <= prev {
			t.Errorf("watch event %d (%s on %s): rv %d after %d", i, ev.name, ms[ev.server].name, ev.rv, prev)
		}
		prev = ev.rv
		if rv, ok := listed[ev.name]; !ok || strconv.FormatInt(ev.rv, 10) != rv {
			t.Errorf("watch event %d: %s at rv %d, listed %q", i, ev.name, ev.rv, rv)
		}
		if ev.server == victim {
			onVictim++
		}
	}
	var dup []string
	for name, n := range count {
		if n > 1 {
			dup = append(dup, fmt.Sprintf("%s ×%d", name, n))
		}
	}
	if len(dup) > 0 {
		t.Errorf("the watch saw %d creates more than once: %v", len(dup), dup)
	}
	if len(count) != len(listed) {
		t.Errorf("the watch saw %d distinct creates, %d are listed", len(count), len(listed))
	}
	t.Logf("the watch saw %d ADDED events: %d on %s before it died, then %v; no gap, no duplicate, rv order kept",
		len(events), onVictim, ms[victim].name, resumes)
}

// ackedWrite is one create a writer was told succeeded.
type ackedWrite struct {
	name, rv  string
	first, at time.Time // first attempt, acknowledgement
	byRetry   bool      // AlreadyExists to a retry after an unanswered attempt
}

// failoverWriter creates ConfigMaps load-<id>-<n> one after another
// through one API server, and moves to the next when a request to it
// fails, as a client behind a load balancer is moved; it retries the
// same name until it is acknowledged.
type failoverWriter struct {
	t      *testing.T
	ms     []*haMember
	id     int
	server int // index in ms of the server it writes through now

	mu     sync.Mutex
	acked  []ackedWrite
	failed int      // attempts that failed
	errs   []string // answers that no client should get
}

func (w *failoverWriter) ackedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// run creates until ctx ends; the create under way when it ends is seen
// through to its acknowledgement, so that every name sent is accounted
// for.
func (w *failoverWriter) run(ctx context.Context) {
	for n := 0; ctx.Err() == nil; n++ {
		name := fmt.Sprintf("load-%d-%05d", w.id, n)
		if !w.create(name) {
			return
		}
	}
}

// create writes name until a server acknowledges it; false if it gave up
// (an answer no client should get, or 60 s without one).
func (w *failoverWriter) create(name string) bool {
	first := time.Now()
	unanswered := false // an attempt may have been committed
	for time.Since(first) < 60*time.Second {
		r := createConfigMap(w.ms[w.server].URL, name, 15*time.Second)
		switch {
		case r.code == http.StatusCreated:
			w.ack(ackedWrite{name: name, rv: r.rv, first: first, at: time.Now()})
			return true
		case r.code == http.StatusConflict && unanswered:
			// An attempt without an answer was committed after all: the
			// create is acknowledged by this retry. Its resourceVersion
			// is the object's.
			got := newRegisterClient(w.ms[w.server], w.id).send("GET", name, "")
			if got.code != 200 {
				w.fail(fmt.Sprintf("%s: AlreadyExists, then GET %d %v %s", name, got.code, got.err, got.body))
				return false
			}
			w.ack(ackedWrite{name: name, rv: strconv.FormatInt(got.rv, 10), first: first, at: time.Now(), byRetry: true})
			return true
		case r.err != nil || r.code >= 500:
			w.mu.Lock()
			w.failed++
			w.mu.Unlock()
			if !errors.Is(r.err, errConnRefused) {
				unanswered = true
			}
			if r.code >= 500 { // an election under way: give it a moment
				time.Sleep(20 * time.Millisecond)
			}
			w.server = (w.server + 1) % len(w.ms)
		default:
			w.fail(fmt.Sprintf("%s through %s: %d %s", name, w.ms[w.server].name, r.code, r.body))
			return false
		}
	}
	w.fail(fmt.Sprintf("%s: no server acknowledged it within 60 s", name))
	return false
}

func (w *failoverWriter) ack(a ackedWrite) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.acked = append(w.acked, a)
}

func (w *failoverWriter) fail(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, fmt.Sprintf("writer %d: %s", w.id, msg))
}

// resumingWatch is a watch that, when its stream ends, starts again on
// the next API server from the last resourceVersion it saw, as an
// informer's reflector does when its connection breaks.
type resumingWatch struct {
	ms     []*haMember
	path   string
	rv     string // the last resourceVersion seen
	server int

	mu      sync.Mutex
	events  []seenEvent
	errs    []string // ERROR events: the resume failed
	resumes []string // where and from which rv it resumed, how long after the stream ended
	resumed int      // index in ms of the server it resumed on; -1 before
}

// seenEvent is one event of the watch and the server that sent it.
type seenEvent struct {
	typ, name string
	rv        int64
	server    int
}

func (w *resumingWatch) resumedOn() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.resumes) == 0 {
		return -1
	}
	return w.resumed
}

// added is the set of names seen ADDED.
func (w *resumingWatch) added() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	for _, ev := range w.events {
		if ev.typ == "ADDED" {
			seen[ev.name] = true
		}
	}
	return seen
}

// run reads stream, then resumes on the next servers in turn until ctx
// ends.
func (w *resumingWatch) run(ctx context.Context, stream <-chan watchEvent) {
	tick := time.NewTicker(20 * time.Millisecond) // between attempts to resume
	defer tick.Stop()
	for {
		for ev := range stream {
			switch ev.Type {
			case "ADDED", "MODIFIED", "DELETED":
				rv, _ := strconv.ParseInt(ev.Object.Metadata.ResourceVersion, 10, 64)
				w.mu.Lock()
				w.events = append(w.events, seenEvent{typ: ev.Type, name: ev.Object.Metadata.Name, rv: rv, server: w.server})
				w.mu.Unlock()
				w.rv = ev.Object.Metadata.ResourceVersion
			case "BOOKMARK":
			case "ERROR": // 410 Gone: the resourceVersion is compacted away
				w.mu.Lock()
				w.errs = append(w.errs, fmt.Sprintf("on %s from rv %s: %d %s", w.ms[w.server].name, w.rv, ev.Object.Code, ev.Object.Reason))
				w.mu.Unlock()
			default: // not a watch: the server answered with a Status (not ready)
			}
		}
		ended := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			w.server = (w.server + 1) % len(w.ms)
			var err error
			if stream, err = openWatch(ctx, w.ms[w.server].URL+w.path+"?resourceVersion="+w.rv); err == nil {
				break
			}
		}
		w.mu.Lock()
		w.resumed = w.server
		w.resumes = append(w.resumes, fmt.Sprintf("resumed on %s from rv %s %v after the stream ended", w.ms[w.server].name, w.rv, time.Since(ended).Round(time.Millisecond)))
		w.mu.Unlock()
	}
}
