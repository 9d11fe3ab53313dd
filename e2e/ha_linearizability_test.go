package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/mkube/mkube/internal/testserver"
)

// Eight clients, each on one of the three API servers of a stacked HA
// cluster, read, write and compare-and-swap four ConfigMaps' data values
// while the hosts are killed in turn (SIGKILL: API server and etcd member
// at once) and started again: the etcd leader's host, a follower's, the
// new leader's. Every operation is recorded with its call and return time
// and its outcome, and porcupine checks that the history is linearizable:
// that some order of the operations, each taking effect at one instant
// between its call and its return, explains every answer. So nothing
// acknowledged is lost (a later read would not see it), nothing is read
// stale from a member that fell behind, and no compare-and-swap wins on
// a state that was gone.
func TestHAConfigMapsStayLinearizableWhileHostsAreKilled(t *testing.T) {
	t.Parallel()
	etcdctl := findEtcdctl(t)
	ms := startHACluster(t)
	h := newRegisterHistory()

	// The registers: created through the first server before the load,
	// each creation the first write of its register's history.
	keys := []string{"lin-a", "lin-b", "lin-c", "lin-d"}
	setup := newRegisterClient(ms[0], -1)
	for _, k := range keys {
		call := h.now()
		r := setup.send("POST", "", configMapBody(k, k+"-created", ""))
		if r.code != 201 {
			t.Fatalf("create %s: %d %v %s", k, r.code, r.err, r.body)
		}
		h.add(h.newStream(), registerInput{kind: writeOp, key: k, value: k + "-created"}, call, registerOutput{rv: r.rv}, h.now())
	}

	const clients = 8
	var (
		answered [3]atomic.Int64 // operations answered 2xx or 409, by server
		refused  atomic.Int64    // requests never sent: the server was down
		lostRead atomic.Int64    // reads with no answer: not in the history
		wg       sync.WaitGroup
	)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for i := range clients {
		w := &registerWorker{t: t, h: h, c: newRegisterClient(ms[i%3], i), keys: keys,
			rng: rand.New(rand.NewPCG(uint64(i), 29)), answered: &answered[i%3], refused: &refused, lostRead: &lostRead}
		wg.Go(func() { w.run(ctx) })
	}
	answeredBy := func(idx []int, n int64, since [3]int64) func() (bool, string) {
		return func() (bool, string) {
			var state []string
			ok := true
			for _, i := range idx {
				got := answered[i].Load() - since[i]
				ok = ok && got >= n
				state = append(state, fmt.Sprintf("%s %d", ms[i].name, got))
			}
			return ok, strings.Join(state, ", ")
		}
	}
	snapshot := func() (s [3]int64) {
		for i := range s {
			s[i] = answered[i].Load()
		}
		return s
	}
	testserver.EventuallyWithin(t, 30*time.Second, "each server answered 30 operations", answeredBy([]int{0, 1, 2}, 30, [3]int64{}))

	// The faults, one host at a time so that two members always remain:
	// the leader's host (an election follows), a follower's, the new
	// leader's. Each stays down until the two others have answered 40
	// more operations, and the next fault waits until the restarted
	// server's clients have 20 answers again (counts, not durations: the
	// test takes as long as the machine needs, on a loaded one too).
	type kill struct {
		name, role string
		at, back   int64 // on the history's clock
	}
	var kills []kill
	for round, role := range []string{"leader", "follower", "leader"} {
		leader := etcdLeader(t, etcdctl, ms)
		victim := leader
		if role == "follower" {
			victim = (leader + 1 + round%2) % 3
		}
		var others []int
		for i := range ms {
			if i != victim {
				others = append(others, i)
			}
		}
		before := snapshot()
		k := kill{name: ms[victim].name, role: role, at: h.now()}
		ms[victim].kill()
		testserver.EventuallyWithin(t, 60*time.Second, fmt.Sprintf("with %s (the %s) killed, the two others answered 40 operations each", k.name, role),
			answeredBy(others, 40, before))
		ms[victim].restart()
		ms[victim].waitReady()
		k.back = h.now()
		kills = append(kills, k)
		testserver.EventuallyWithin(t, 60*time.Second, fmt.Sprintf("%s, back, answered 20 operations", k.name),
			answeredBy([]int{victim}, 20, snapshot()))
	}
	stop()
	wg.Wait()

	// The last word: every register read through every server once the
	// load has stopped, so that a write acknowledged late and then lost
	// would show.
	for i, m := range ms {
		m.waitReady()
		c := newRegisterClient(m, clients+i)
		for _, k := range keys {
			call := h.now()
			r := c.send("GET", k, "")
			if r.code != 200 {
				t.Fatalf("%s: final GET %s: %d %v %s", m.name, k, r.code, r.err, r.body)
			}
			h.add(h.newStream(), registerInput{kind: readOp, key: k}, call, registerOutput{value: r.value, rv: r.rv}, h.now())
		}
	}

	ops := h.operations()
	counts := map[string]int{}
	for _, op := range ops {
		in, out := op.Input.(registerInput), op.Output.(registerOutput)
		counts[fmt.Sprintf("%v %v", in.kind, out.outcome)]++
	}
	t.Logf("history: %d operations on %d ConfigMaps from %d clients: %v; not in the history: %d requests refused (server down), %d reads unanswered",
		len(ops), len(keys), clients, counts, refused.Load(), lostRead.Load())
	for _, k := range kills {
		t.Logf("killed %s (the etcd %s) at %v, back and ready at %v; first write acknowledged by another server %v after the kill",
			k.name, k.role, time.Duration(k.at).Round(time.Millisecond), time.Duration(k.back).Round(time.Millisecond), firstAckAfter(ops, k.at))
	}

	model := registerModel()
	began := time.Now()
	res, info := porcupine.CheckOperationsVerbose(model, ops, 60*time.Second)
	t.Logf("porcupine: %s in %v", res, time.Since(began).Round(time.Millisecond))
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		t.Errorf("the history is not linearizable: %s", visualize(t, model, info))
	default:
		t.Errorf("porcupine could not decide within 60 s whether the %d operations are linearizable (verdict %s): "+
			"the history is too large or too concurrent for the checker; no violation was found, none was ruled out", len(ops), res)
	}
}

// firstAckAfter is how long after at the first write was acknowledged
// that had been sent after at.
func firstAckAfter(ops []porcupine.Operation, at int64) time.Duration {
	first := int64(-1)
	for _, op := range ops {
		in, out := op.Input.(registerInput), op.Output.(registerOutput)
		if in.kind != readOp && out.outcome == succeeded && op.Call >= at && (first < 0 || op.Return < first) {
			first = op.Return
		}
	}
	return time.Duration(first - at).Round(time.Millisecond)
}

// visualize writes porcupine's page of the history (each ConfigMap's
// operations, the longest linearization found, where it failed) to a
// directory kept after the test, and says where.
func visualize(t *testing.T, model porcupine.Model, info porcupine.LinearizationInfo) string {
	dir := os.Getenv("MKUBE_E2E_LOGS")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "mkube-ha-porcupine-"); err != nil {
			return err.Error()
		}
	}
	path := filepath.Join(dir, t.Name()+".html")
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		return fmt.Sprintf("visualize: %v", err)
	}
	return "porcupine's visualization is at " + path
}

// registerWorker is one client of the linearizability test, bound to one
// API server: a loop of random operations on random ConfigMaps, each
// recorded in the history.
type registerWorker struct {
	t        *testing.T
	h        *registerHistory
	c        registerClient
	keys     []string
	rng      *rand.Rand
	answered *atomic.Int64 // its server's count
	refused  *atomic.Int64
	lostRead *atomic.Int64
	stream   int
	written  int
}

// run issues operations until ctx ends: 40% reads, 30% writes, 30% a read
// and a compare-and-swap on what it read. After a request that got no
// answer it waits for its server's /readyz before the next one, so that
// a server that is down costs one indeterminate operation per client,
// not hundreds (each would widen the checker's search).
func (w *registerWorker) run(ctx context.Context) {
	w.stream = w.h.newStream()
	ready := true
	for ctx.Err() == nil {
		if !ready {
			w.c.waitReady(ctx)
		}
		key := w.keys[w.rng.IntN(len(w.keys))]
		switch p := w.rng.IntN(10); {
		case p < 4:
			_, _, ready = w.read(key)
		case p < 7:
			ready = w.write(key, "", 0)
		default:
			var value string
			var rv int64
			if value, rv, ready = w.read(key); ready {
				ready = w.write(key, value, rv)
			}
		}
	}
}

// read GETs key and records what it saw; ok is false if there was no
// answer.
func (w *registerWorker) read(key string) (value string, rv int64, ok bool) {
	call := w.h.now()
	r := w.c.send("GET", key, "")
	ret := w.h.now()
	switch o, sent := w.classify(r); {
	case !sent:
		return "", 0, false
	case o == indeterminate:
		w.lostRead.Add(1)
		return "", 0, false
	default:
		w.h.add(w.stream, registerInput{kind: readOp, key: key}, call, registerOutput{value: r.value, rv: r.rv}, ret)
		return r.value, r.rv, true
	}
}

// write PUTs a new value, unique in the run, into key: a plain update
// when expectRV is 0, else a compare-and-swap of the value read with
// that resourceVersion. It records the outcome; ok is false if there
// was no answer.
func (w *registerWorker) write(key, expect string, expectRV int64) (ok bool) {
	w.written++
	in := registerInput{kind: writeOp, key: key, value: fmt.Sprintf("c%d-%d", w.c.id, w.written)}
	rv := ""
	if expectRV != 0 {
		in.kind, in.expect, in.expectRV, rv = casOp, expect, expectRV, strconv.FormatInt(expectRV, 10)
	}
	call := w.h.now()
	r := w.c.send("PUT", key, configMapBody(key, in.value, rv))
	ret := w.h.now()
	o, sent := w.classify(r)
	if !sent {
		return false
	}
	if o == conflicted && in.kind != casOp {
		w.t.Errorf("%s: a PUT without resourceVersion conflicted: %s", w.c.m.name, r.body)
	}
	w.h.add(w.stream, in, call, registerOutput{outcome: o, rv: r.rv}, ret)
	if o == indeterminate {
		w.stream = w.h.newStream() // this one may still be running
		return false
	}
	return true
}

// classify tells how an answer ended; sent is false for a request that never
// reached a server (connection refused: it is down), which is left out of
// the history, as it changed nothing.
func (w *registerWorker) classify(r registerResult) (o outcome, sent bool) {
	switch {
	case errors.Is(r.err, errConnRefused):
		w.refused.Add(1)
		return indeterminate, false
	case r.err != nil, r.code >= 500, r.code == http.StatusTooManyRequests:
		return indeterminate, true
	case r.code == http.StatusConflict:
		w.answered.Add(1)
		return conflicted, true
	case r.code >= 200 && r.code < 300:
		w.answered.Add(1)
		return succeeded, true
	default:
		w.t.Errorf("%s: unexpected answer %d %s", w.c.m.name, r.code, r.body)
		return indeterminate, true
	}
}

// registerClient talks to one API server with a connection of its own.
type registerClient struct {
	m    *haMember
	id   int
	http *http.Client
}

func newRegisterClient(m *haMember, id int) registerClient {
	// A request that hangs longer is taken as unanswered: the server
	// answers etcd's own timeout (5 s and two election timeouts, about
	// 7 s) before it.
	return registerClient{m: m, id: id, http: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{}}}
}

// registerResult is an answer about one ConfigMap: its data value and
// resourceVersion when the answer is the object.
type registerResult struct {
	code  int
	body  string
	value string
	rv    int64
	err   error
}

// configMapBody is a ConfigMap whose data.v is value; with rv, a PUT of it
// is a compare-and-swap.
func configMapBody(name, value, rv string) string {
	meta := fmt.Sprintf(`{"name":%q}`, name)
	if rv != "" {
		meta = fmt.Sprintf(`{"name":%q,"resourceVersion":%q}`, name, rv)
	}
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":%s,"data":{"v":%q}}`, meta, value)
}

// send makes one request: POST creates (name ""), GET and PUT address
// the ConfigMap name.
func (c registerClient) send(method, name, body string) registerResult {
	url := c.m.URL + "/api/v1/namespaces/default/configmaps"
	if name != "" {
		url += "/" + name
	}
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return registerResult{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	r := registerResult{code: resp.StatusCode, body: string(data), err: err}
	if err != nil || r.code >= 300 {
		return r
	}
	var cm struct {
		Metadata struct{ ResourceVersion string }
		Data     struct{ V string }
	}
	if err := json.Unmarshal(data, &cm); err != nil {
		r.err = fmt.Errorf("decode %q: %w", data, err)
		return r
	}
	r.value = cm.Data.V
	r.rv, r.err = strconv.ParseInt(cm.Metadata.ResourceVersion, 10, 64)
	return r
}

// waitReady polls the server's /readyz until it answers 200 or ctx ends.
func (c registerClient) waitReady(ctx context.Context) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := c.http.Get(c.m.URL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
