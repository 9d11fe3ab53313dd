package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// haMember is one control-plane host of a stacked HA cluster: an API
// server with its etcd member embedded, as kubeadm's stacked topology
// puts one beside each kube-apiserver.
type haMember struct {
	*cluster
	name          string
	bind          string // its own loopback address, where its secure port listens
	ip            string // its --advertise-address, in the kubernetes Endpoints
	dataDir       string
	args          []string
	etcdClientURL string
}

// startHACluster starts three API servers at once, each embedding one
// member of a three-member etcd cluster: they form the cluster together
// (--etcd-initial-cluster-state new) and bootstrap the same defaults at
// the same moment, which must not trip over each other.
//
// Each host has addresses of its own, as cp1, cp2 and cp3 of
// docker-compose.ha.yml: its secure port listens on 127.0.0.1, 127.0.0.2
// or 127.0.0.3 (all loopback on Linux), on the same port for all three,
// as every kube-apiserver of a cluster serves on the same port; and it
// advertises 198.51.100.1, .2 or .3 (TEST-NET-2, reserved for examples):
// Endpoints may not hold loopback addresses, and this host has no three
// others. So the default/kubernetes Endpoints name three servers, one
// address each, on the port they serve on. They share one cert dir, as
// the compose file's pki volume.
func startHACluster(t *testing.T) []*haMember {
	t.Helper()
	dir := t.TempDir()
	securePort := strconv.Itoa(freePort(t))
	var members []*haMember
	var initial []string
	for i := range 3 {
		m := &haMember{name: fmt.Sprintf("cp%d", i+1), bind: fmt.Sprintf("127.0.0.%d", i+1), ip: fmt.Sprintf("198.51.100.%d", i+1), dataDir: filepath.Join(dir, fmt.Sprintf("cp%d", i+1)),
			etcdClientURL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}
		m.cluster = &cluster{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), logs: map[string]string{}}
		peer := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
		initial = append(initial, m.name+"="+peer)
		m.args = []string{"--port", portOf(m.URL), "--secure-port", securePort, "--bind-address", m.bind, "--advertise-address", m.ip,
			"--cert-dir", filepath.Join(dir, "pki"), "--data-dir", m.dataDir,
			"--etcd-name", m.name, "--etcd-listen-peer-urls", peer, "--etcd-client-url", m.etcdClientURL}
		members = append(members, m)
	}
	for _, m := range members {
		m.args = append(m.args, "--etcd-initial-cluster", strings.Join(initial, ","))
		m.start("apiserver", m.args...)
	}
	for _, m := range members {
		m.waitReady()
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range members {
				m.dumpLogs()
			}
		}
	})
	return members
}

// kill ends the host's API server and etcd member at once, as a crash
// (SIGKILL: no goodbye to the peers, no flush).
func (m *haMember) kill() {
	m.t.Helper()
	if err := m.procs["apiserver"].Kill(); err != nil {
		m.t.Fatal(err)
	}
	m.procs["apiserver"].Wait()
}

// restart starts the host's API server again on its data: the member
// rejoins with the log it had.
func (m *haMember) restart() {
	m.t.Helper()
	m.start("apiserver", m.args...)
}

// etcdLeader is the index in ms of the member that leads, by etcdctl
// endpoint status: the member whose ID is the leader's. It waits out an
// election (no member leads) for up to 30 s.
func etcdLeader(t *testing.T, etcdctl string, ms []*haMember) int {
	t.Helper()
	leader := -1
	testserver.EventuallyWithin(t, 30*time.Second, "a member of "+fmt.Sprint(len(ms))+" leads", func() (bool, string) {
		var err error
		leader, err = etcdLeaderNow(etcdctl, ms)
		return err == nil, fmt.Sprint(err)
	})
	return leader
}

// etcdLeaderNow asks each member whether it leads, once.
func etcdLeaderNow(etcdctl string, ms []*haMember) (int, error) {
	for i, m := range ms {
		out, err := exec.Command(etcdctl, "--endpoints", m.etcdClientURL, "endpoint", "status", "-w", "json").Output()
		if err != nil {
			return -1, fmt.Errorf("etcdctl endpoint status %s: %w", m.name, err)
		}
		var st []struct {
			Status struct {
				Header struct {
					MemberID uint64 `json:"member_id"`
				}
				Leader uint64
			}
		}
		if err := json.Unmarshal(out, &st); err != nil || len(st) != 1 {
			return -1, fmt.Errorf("endpoint status %s: %v\n%s", m.name, err, out)
		}
		if st[0].Status.Header.MemberID == st[0].Status.Leader {
			return i, nil
		}
	}
	return -1, errors.New("no member says it leads")
}

// findEtcdctl returns the real etcdctl that `make tools` builds at
// bin/etcdctl, or one on PATH.
func findEtcdctl(t *testing.T) string {
	t.Helper()
	if abs, err := filepath.Abs(filepath.Join("..", "bin", "etcdctl")); err == nil {
		if _, err := os.Stat(abs); err == nil {
			return abs
		}
	}
	if path, err := exec.LookPath("etcdctl"); err == nil {
		return path
	}
	t.Fatal("etcdctl is neither at bin/etcdctl nor on PATH: `make tools` builds it (go.etcd.io/etcd/etcdctl/v3, hack/etcdctl)")
	return ""
}

// errConnRefused is the error of a request to a host whose server is
// down: nothing was sent, so nothing can have been written (unlike a
// connection that breaks after the request went out).
var errConnRefused = syscall.ECONNREFUSED

// writeResult is one write's answer: its code, its Status or object, how
// long it took.
type writeResult struct {
	code    int
	body    string
	rv      string
	elapsed time.Duration
	err     error
}

// createConfigMap writes one ConfigMap through a server, with a client
// that gives up after timeout.
func createConfigMap(url, name string, timeout time.Duration) writeResult {
	client := &http.Client{Timeout: timeout}
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":"v"}}`, name)
	began := time.Now()
	resp, err := client.Post(url+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	r := writeResult{elapsed: time.Since(began), err: err}
	if err != nil {
		return r
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r.code, r.body = resp.StatusCode, string(data)
	var obj struct {
		Metadata struct{ ResourceVersion string }
	}
	json.Unmarshal(data, &obj)
	r.rv = obj.Metadata.ResourceVersion
	return r
}

// latencies says p50 and max of a run of writes.
func latencies(rs []writeResult) (p50, maxd time.Duration) {
	d := make([]time.Duration, len(rs))
	for i, r := range rs {
		d[i] = r.elapsed
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2], d[len(d)-1]
}

// Three API servers, each with its etcd member embedded, form one
// cluster; any of them serves every request; the loss of one host (API
// server and member, kill -9) leaves a quorum of two, and writes go on;
// the loss of a second leaves no quorum: a write fails with a Status
// within the request timeout. When the two come back, every write that
// was acknowledged is there, and a watch that was on a killed server
// resumes on another from its last resourceVersion, with no gap and no
// duplicate.
func TestHAThreeStackedMembersSurviveTheLossOfOne(t *testing.T) {
	t.Parallel()
	etcdctl := findEtcdctl(t)
	ms := startHACluster(t)
	// C is the member that leads the Raft cluster: killing it is the
	// harder loss, with an election before the next commit.
	a, b, c := ms[0], ms[1], ms[2]
	if i := etcdLeader(t, etcdctl, ms); i != 2 {
		others := slices.Delete(slices.Clone(ms), i, i+1)
		a, b, c = others[0], others[1], ms[i]
	}
	t.Logf("the etcd leader is %s: it is the one killed first", c.name)
	endpoints := strings.Join([]string{a.etcdClientURL, b.etcdClientURL, c.etcdClientURL}, ",")

	// etcdctl member list: three members, each started (it has a client URL).
	out, err := exec.Command(etcdctl, "--endpoints", a.etcdClientURL, "member", "list", "-w", "json").Output()
	if err != nil {
		t.Fatalf("etcdctl member list: %v", err)
	}
	var list struct {
		Members []struct {
			Name       string
			ClientURLs []string
		}
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("member list: %v\n%s", err, out)
	}
	var names []string
	for _, m := range list.Members {
		if len(m.ClientURLs) == 0 {
			t.Errorf("member %q is not started (no client URL)", m.Name)
		}
		names = append(names, m.Name)
	}
	sort.Strings(names)
	if !slices.Equal(names, []string{"cp1", "cp2", "cp3"}) {
		t.Fatalf("etcdctl member list: %v, want cp1 cp2 cp3\n%s", names, out)
	}
	text, _ := exec.Command(etcdctl, "--endpoints", a.etcdClientURL, "member", "list").CombinedOutput()
	t.Logf("etcdctl member list:\n%s", text)
	health, err := exec.Command(etcdctl, "--endpoints", endpoints, "endpoint", "health").CombinedOutput()
	if err != nil || strings.Count(string(health), "is healthy") != 3 {
		t.Fatalf("etcdctl endpoint health: %v\n%s", err, health)
	}
	t.Logf("etcdctl endpoint health:\n%s", health)

	// Bootstrapped once though three servers did it at once: one
	// default namespace, one cluster-admin.
	for _, m := range ms {
		if code := m.do("GET", "/api/v1/namespaces/default", "", nil, nil); code != 200 {
			t.Fatalf("%s: GET namespace default: %d", m.name, code)
		}
		if code := m.do("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin", "", nil, nil); code != 200 {
			t.Fatalf("%s: GET clusterrole cluster-admin: %d", m.name, code)
		}
	}

	// A write through A is read and watched through B and C, from the
	// resourceVersion A's list gave.
	var before struct {
		Metadata struct{ ResourceVersion string }
	}
	a.do("GET", "/api/v1/namespaces/default/configmaps", "", nil, &before)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	watchB := b.watch(ctx, "/api/v1/namespaces/default/configmaps?resourceVersion="+before.Metadata.ResourceVersion)
	cctx, cancelC := context.WithCancel(ctx)
	defer cancelC()
	watchC := c.watch(cctx, "/api/v1/namespaces/default/configmaps?resourceVersion="+before.Metadata.ResourceVersion)
	first := createConfigMap(a.URL, "through-a", 10*time.Second)
	if first.code != 201 {
		t.Fatalf("create through A: %d %s", first.code, first.body)
	}
	for _, m := range []*haMember{b, c} {
		var cm struct {
			Metadata struct{ ResourceVersion string }
		}
		if code := m.do("GET", "/api/v1/namespaces/default/configmaps/through-a", "", nil, &cm); code != 200 || cm.Metadata.ResourceVersion != first.rv {
			t.Fatalf("%s: GET through-a: %d rv %s, want 200 rv %s", m.name, code, cm.Metadata.ResourceVersion, first.rv)
		}
	}
	for name, w := range map[string]<-chan watchEvent{"B": watchB, "C": watchC} {
		select {
		case ev := <-w:
			if ev.Type != "ADDED" || ev.Object.Metadata.Name != "through-a" || ev.Object.Metadata.ResourceVersion != first.rv {
				t.Fatalf("watch on %s: %+v", name, ev)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch on %s never saw A's write", name)
		}
	}

	// Writes with all three up, then with C killed, through A; the
	// watch on C sees what it can before C dies.
	acked := map[string]string{"through-a": first.rv}
	var up, degraded []writeResult
	for i := range 30 {
		r := createConfigMap(a.URL, fmt.Sprintf("before-%02d", i), 10*time.Second)
		if r.code != 201 {
			t.Fatalf("write %d with three members: %d %s", i, r.code, r.body)
		}
		acked[fmt.Sprintf("before-%02d", i)] = r.rv
		up = append(up, r)
	}
	var seenOnC []watchEvent
	for len(seenOnC) < 30 {
		select {
		case ev := <-watchC:
			seenOnC = append(seenOnC, ev)
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch on C saw %d of 30 writes", len(seenOnC))
		}
	}
	killed := time.Now()
	c.kill()
	t.Logf("killed %s, the leader (API server and etcd member, SIGKILL)", c.name)
	var failed []writeResult
	var firstOK time.Duration
	for i := range 30 {
		name := fmt.Sprintf("during-%02d", i)
		r := createConfigMap(a.URL, name, 30*time.Second)
		// While the two left elect a leader a write may fail, with a
		// Status as kube-apiserver's "etcdserver: leader changed"; it is
		// tried again, as a client would. A failed write may still have
		// been committed: then the retry finds it (409) and reads it.
		for r.code != 201 && r.code != 409 && time.Since(killed) < 20*time.Second {
			if r.err != nil || r.code < 500 || !strings.Contains(r.body, `"kind":"Status"`) {
				t.Fatalf("write %d with the leader down: %v %d %s", i, r.err, r.code, r.body)
			}
			failed = append(failed, r)
			r = createConfigMap(a.URL, name, 30*time.Second)
		}
		if r.code == 409 {
			var cm struct {
				Metadata struct{ ResourceVersion string }
			}
			a.do("GET", "/api/v1/namespaces/default/configmaps/"+name, "", nil, &cm)
			r.rv = cm.Metadata.ResourceVersion
		} else if r.code != 201 {
			t.Fatalf("write %d with the leader down: still failing 20s after the kill: %d %s", i, r.code, r.body)
		}
		if firstOK == 0 {
			firstOK = time.Since(killed)
		}
		acked[name] = r.rv
		degraded = append(degraded, r)
	}
	for _, f := range failed {
		t.Logf("a write failed while the leader was being replaced, after %v: %d %s", f.elapsed.Round(time.Millisecond), f.code, f.body)
	}
	t.Logf("the first write acknowledged %v after the leader was killed (%d failed before it)", firstOK.Round(time.Millisecond), len(failed))
	p50up, maxUp := latencies(up)
	p50down, maxDown := latencies(degraded)
	t.Logf("write latency through A, 30 sequential creates each: three members p50 %v max %v; one member killed p50 %v max %v (the first after the kill: %v, %v after it)",
		p50up, maxUp, p50down, maxDown, degraded[0].elapsed, time.Since(killed).Round(time.Millisecond))

	// The watch that was on C resumes on B from the last resourceVersion
	// it had: the writes made while C was dying follow, none twice, none
	// missing.
	for ev := range watchC { // the stream ended with C: drain what was sent before
		seenOnC = append(seenOnC, ev)
	}
	last := seenOnC[len(seenOnC)-1].Object.Metadata.ResourceVersion
	resumed := b.watch(ctx, "/api/v1/namespaces/default/configmaps?resourceVersion="+last)
	got := slices.Clone(seenOnC)
	for len(got) < 60 {
		select {
		case ev := <-resumed:
			got = append(got, ev)
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch resumed on B at rv %s: %d events in all, want 60", last, len(got))
		}
	}
	var want []string // through-a was read off the watch on C above
	for i := range 30 {
		want = append(want, fmt.Sprintf("before-%02d", i))
	}
	for i := range 30 {
		want = append(want, fmt.Sprintf("during-%02d", i))
	}
	select {
	case ev := <-resumed:
		t.Fatalf("the resumed watch sent one event too many: %+v", ev)
	case <-time.After(500 * time.Millisecond):
	}
	var gotNames []string
	for i, ev := range got {
		gotNames = append(gotNames, ev.Object.Metadata.Name)
		if ev.Object.Metadata.ResourceVersion != acked[ev.Object.Metadata.Name] {
			t.Errorf("event %d (%s): rv %s, the write answered %s", i, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion, acked[ev.Object.Metadata.Name])
		}
	}
	if !slices.Equal(gotNames, want) {
		t.Fatalf("the watch, on C then resumed on B from rv %s, saw %v\nwant %v", last, gotNames, want)
	}
	t.Logf("the watch on C saw %d events before C died; resumed on B from rv %s it saw the next %d: no gap, no duplicate", len(seenOnC), last, len(got)-len(seenOnC))

	// B killed too: one member of three is no quorum. A's write fails,
	// with a Status, before the client's 60 s (kubectl's default has
	// none; client-go's is the server's 60 s request timeout).
	b.kill()
	t.Logf("killed %s: %s alone is no quorum", b.name, a.name)
	lost := createConfigMap(a.URL, "without-quorum", 60*time.Second)
	if lost.err != nil {
		t.Fatalf("a write without quorum: no answer within 60s: %v", lost.err)
	}
	var st struct {
		Kind, Status, Message, Reason string
		Code                          int
	}
	if err := json.Unmarshal([]byte(lost.body), &st); err != nil || st.Kind != "Status" || st.Code != lost.code || lost.code < 500 {
		t.Fatalf("a write without quorum: %d %s, want a 5xx Status", lost.code, lost.body)
	}
	t.Logf("a write without quorum failed after %v: %d %s %q", lost.elapsed.Round(time.Millisecond), st.Code, st.Reason, st.Message)

	// Both back: the cluster has its quorum again, and every
	// acknowledged write is there, read through each server.
	b.restart()
	c.restart()
	for _, m := range ms {
		m.waitReady()
	}
	for _, m := range ms {
		var l struct {
			Items []struct {
				Metadata struct{ Name, ResourceVersion string }
			}
		}
		if code := m.do("GET", "/api/v1/namespaces/default/configmaps", "", nil, &l); code != 200 {
			t.Fatalf("%s: list configmaps: %d", m.name, code)
		}
		have := map[string]string{}
		for _, it := range l.Items {
			have[it.Metadata.Name] = it.Metadata.ResourceVersion
		}
		for name, rv := range acked {
			if have[name] != rv {
				t.Errorf("%s: acknowledged write %s (rv %s) is %q after the members returned", m.name, name, rv, have[name])
			}
		}
	}
	if r := createConfigMap(b.URL, "after-return", 30*time.Second); r.code != 201 {
		t.Fatalf("a write through B after the members returned: %d %s", r.code, r.body)
	}
	t.Logf("%d acknowledged writes all present through each of the three servers after two members returned", len(acked))
}
