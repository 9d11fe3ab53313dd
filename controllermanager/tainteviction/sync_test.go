package tainteviction

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/controllermanager/controller"
)

// These tests drive the controller by hand, on one goroutine: the test
// writes the caches and calls the handlers as an informer would, then runs
// the queue dry; the fake clock's Step fires the eviction timers. Only the
// DELETEs go over HTTP, to a server that records them.

// fakeLister is a cache the test writes directly.
type fakeLister struct {
	objs map[string]runtime.Object
}

func (f *fakeLister) Get(key string) (runtime.Object, bool) {
	obj, ok := f.objs[key]
	return obj, ok
}

// ByIndex knows the one index the controller uses: pods by node.
func (f *fakeLister) ByIndex(index, value string) []runtime.Object {
	var out []runtime.Object
	for _, obj := range f.objs {
		if pod, ok := obj.(*corev1.Pod); ok && index == client.IndexPodsByNode && pod.Spec.NodeName == value {
			out = append(out, obj)
		}
	}
	sort.Slice(out, func(i, j int) bool { return client.KeyOf(out[i]) < client.KeyOf(out[j]) })
	return out
}

// deletion is one DELETE the controller sent.
type deletion struct {
	pod   string
	uid   types.UID // the UID precondition
	grace *int64    // gracePeriodSeconds, nil for the pod's own
}

// deleteAPI answers DELETE pods/NAME with code(n) for the n-th request
// (from 1), and records them.
type deleteAPI struct {
	code func(n int) int

	mu      sync.Mutex
	deletes []deletion
}

func (a *deleteAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const prefix = "/api/v1/namespaces/default/pods/"
	if r.Method != http.MethodDelete || !strings.HasPrefix(r.URL.Path, prefix) {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	var opts metav1.DeleteOptions
	json.NewDecoder(r.Body).Decode(&opts)
	d := deletion{pod: strings.TrimPrefix(r.URL.Path, prefix), grace: opts.GracePeriodSeconds}
	if opts.Preconditions != nil && opts.Preconditions.UID != nil {
		d.uid = *opts.Preconditions.UID
	}
	a.mu.Lock()
	a.deletes = append(a.deletes, d)
	n := len(a.deletes)
	a.mu.Unlock()
	code := http.StatusOK
	if a.code != nil {
		code = a.code(n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	st := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Code: int32(code), Status: metav1.StatusSuccess}
	if code != http.StatusOK {
		st.Status = metav1.StatusFailure
		st.Reason = map[int]metav1.StatusReason{http.StatusNotFound: metav1.StatusReasonNotFound,
			http.StatusConflict: metav1.StatusReasonConflict}[code]
	}
	json.NewEncoder(w).Encode(st)
}

type harness struct {
	t     *testing.T
	clk   *clocktesting.FakeClock
	nodes *fakeLister
	pods  *fakeLister
	api   *deleteAPI
	logs  *bytes.Buffer
	ctrl  *Controller
}

var t0 = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, clk: clocktesting.NewFakeClock(t0), nodes: &fakeLister{objs: map[string]runtime.Object{}},
		pods: &fakeLister{objs: map[string]runtime.Object{}}, api: &deleteAPI{}, logs: &bytes.Buffer{}}
	hs := httptest.NewServer(h.api)
	t.Cleanup(hs.Close)
	c := client.New(hs.URL, "tainteviction-test")
	log := slog.New(slog.NewTextHandler(h.logs, nil))
	d := controller.Deps{Client: c, Recorder: record.New(c, "controller-manager", "", log), Log: log, Clock: h.clk}
	h.ctrl = newController(d, h.nodes, h.pods, Options{})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller logs:\n%s", h.logs)
		}
	})
	return h
}

// setNode adds or updates node name with these taints, as the node
// informer would.
func (h *harness) setNode(name string, taints ...corev1.Taint) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints}}
	old, _ := h.nodes.objs[name].(*corev1.Node)
	h.nodes.objs[name] = node
	h.ctrl.nodeChanged(old, node)
	h.drain()
}

func (h *harness) deleteNode(name string) {
	old := h.nodes.objs[name].(*corev1.Node)
	delete(h.nodes.objs, name)
	h.ctrl.nodeChanged(old, nil)
	h.drain()
}

// setPod adds or updates a pod, as the pod informer would.
func (h *harness) setPod(pod *corev1.Pod) {
	key := client.KeyOf(pod)
	old, _ := h.pods.objs[key].(*corev1.Pod)
	h.pods.objs[key] = pod
	h.ctrl.podChanged(old, pod)
	h.drain()
}

func (h *harness) deletePod(name string) {
	old := h.pods.objs["default/"+name].(*corev1.Pod)
	delete(h.pods.objs, "default/"+name)
	h.ctrl.podChanged(old, nil)
	h.drain()
}

// drain syncs every queued key; keys added back with AddAfter wait for
// the clock.
func (h *harness) drain() {
	for h.ctrl.queue.Len() > 0 {
		h.ctrl.queue.ProcessNext(context.Background(), h.ctrl.sync, h.ctrl.log, "pod")
	}
}

// step moves the clock, which fires the timers now due, and drains.
func (h *harness) step(d time.Duration) {
	h.clk.Step(d)
	h.drain()
}

// deleted lists the pods the controller sent a DELETE for, in order.
func (h *harness) deleted() []string {
	h.api.mu.Lock()
	defer h.api.mu.Unlock()
	var out []string
	for _, d := range h.api.deletes {
		out = append(out, d.pod)
	}
	return out
}

func (h *harness) expectDeleted(why string, want ...string) {
	h.t.Helper()
	if got := h.deleted(); !slices.Equal(got, want) {
		h.t.Fatalf("at %v deleted %v, want %v: %s", h.clk.Since(t0), got, want, why)
	}
}

func (h *harness) expectLog(substr string) {
	h.t.Helper()
	if !strings.Contains(h.logs.String(), substr) {
		h.t.Errorf("no log line contains %q", substr)
	}
}

// newPod is a pod bound to node.
func newPod(name, node string, tolerations ...corev1.Toleration) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: node, Tolerations: tolerations},
	}
}

// tolerateCheck tolerates check=mycheck:NoExecute, for s seconds (nil: for ever).
func tolerateCheck(s *int64) corev1.Toleration {
	return corev1.Toleration{Key: "check", Operator: corev1.TolerationOpEqual, Value: "mycheck",
		Effect: corev1.TaintEffectNoExecute, TolerationSeconds: s}
}

var other = corev1.Taint{Key: "other", Value: "x", Effect: corev1.TaintEffectNoExecute}

func tolerateOther(s *int64) corev1.Toleration {
	return corev1.Toleration{Key: "other", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: s}
}

func TestAPodThatDoesNotTolerateTheTaintIsDeletedAtOnceAndGracefully(t *testing.T) {
	h := newHarness(t)
	h.setNode("node01")
	h.setNode("node02")
	h.setPod(newPod("web-intolerant", "node01"))
	h.setPod(newPod("web-elsewhere", "node02"))
	h.setPod(newPod("web-pending", ""))
	h.expectDeleted("node01 has no taint yet")

	h.setNode("node01", check) // kubectl taint node node01 check=mycheck:NoExecute
	h.expectDeleted("the pod does not tolerate the taint", "web-intolerant")
	d := h.api.deletes[0]
	if d.uid != "uid-web-intolerant" {
		t.Errorf("DELETE precondition UID = %q, want the pod's: a new pod with the same name must not be deleted", d.uid)
	}
	if d.grace != nil {
		t.Errorf("DELETE gracePeriodSeconds = %d, want none: the pod's own grace period applies", *d.grace)
	}
	h.expectLog("pod does not tolerate node01's taint check=mycheck:NoExecute: evicting now")
	h.expectLog("node has a NoExecute taint")
	if n := h.clk.Waiters(); n != 0 {
		t.Errorf("%d timers set, want none: nothing is scheduled", n)
	}
}

func TestAPodToleratingTheTaintIsDeletedWhenItsTolerationSecondsRunOut(t *testing.T) {
	h := newHarness(t)
	h.setNode("node01")
	h.setPod(newPod("web-60s", "node01", tolerateCheck(seconds(60))))
	h.setPod(newPod("web-forever", "node01", tolerateCheck(nil)))

	h.setNode("node01", check)
	h.expectDeleted("both pods tolerate the taint")
	h.expectLog("pod tolerates node01's taint check=mycheck:NoExecute for 60s: eviction scheduled")
	h.step(59 * time.Second)
	h.expectDeleted("59s < 60s")
	h.step(time.Second)
	h.expectDeleted("60s have passed since the taint appeared", "web-60s")
	h.expectLog("pod tolerated node01's taint check=mycheck:NoExecute for 60s, time is up: evicting now")

	h.step(time.Hour)
	h.expectDeleted("a toleration without tolerationSeconds tolerates for ever", "web-60s")
}

func TestRemovingTheTaintInTimeCancelsTheEviction(t *testing.T) {
	h := newHarness(t)
	h.setNode("node01")
	h.setPod(newPod("web-60s", "node01", tolerateCheck(seconds(60))))
	h.setNode("node01", check)
	h.step(30 * time.Second)

	h.setNode("node01") // kubectl taint node node01 check=mycheck:NoExecute-
	h.expectLog("NoExecute taint removed from node")
	h.expectLog("taint removed from node01: eviction cancelled")
	h.step(time.Hour) // the old timer fires, and finds nothing to do
	h.expectDeleted("the taint was removed before the deadline")

	// Tainted again later: a new countdown, from now.
	h.setNode("node01", check)
	h.step(59 * time.Second)
	h.expectDeleted("the new countdown started when the taint came back")
	h.step(time.Second)
	h.expectDeleted("60s after the taint came back", "web-60s")
}

func TestDeletingTheTaintedNodeCancelsTheEviction(t *testing.T) {
	h := newHarness(t)
	h.setNode("node01", check)
	h.setPod(newPod("web-60s", "node01", tolerateCheck(seconds(60))))
	h.deleteNode("node01")
	h.expectLog("tainted node deleted")
	h.expectLog("node node01 deleted: eviction cancelled")
	h.step(time.Hour)
	h.expectDeleted("no node, no taint: pods of deleted nodes are the pod garbage collector's business")
}

func TestUpdatesToThePodDoNotRestartItsCountdown(t *testing.T) {
	h := newHarness(t)
	h.setNode("node01")
	h.setPod(newPod("web-60s", "node01", tolerateCheck(seconds(60))))
	h.setNode("node01", check)
	h.step(30 * time.Second)

	// Adding a toleration (the one pod spec change the API allows here)
	// queues the pod again.
	h.setPod(newPod("web-60s", "node01", tolerateCheck(seconds(60)), tolerateOther(nil)))
	h.step(30 * time.Second)
	h.expectDeleted("60s after the taint appeared, whatever happened to the pod meanwhile", "web-60s")
}

func TestEachTaintHasItsOwnCountdown(t *testing.T) {
	h := newHarness(t)
	h.setNode("node01")
	h.setPod(newPod("web", "node01", tolerateCheck(seconds(60)), tolerateOther(seconds(20))))
	h.setNode("node01", check) // 10:00:00, tolerated until 10:01:00
	h.step(10 * time.Second)

	h.setNode("node01", check, other) // 10:00:10, tolerated until 10:00:30
	h.expectLog("pod tolerates node01's taint other=x:NoExecute for 20s: eviction rescheduled")
	h.step(15 * time.Second) // 10:00:25
	h.expectDeleted("other appeared 15s ago and is tolerated for 20s")

	h.setNode("node01", check) // 10:00:25: other removed; check's countdown goes on
	h.step(5 * time.Second)    // 10:00:30: other's timer fires, too early now
	h.expectDeleted("other is gone, and check is tolerated until 10:01:00")
	h.step(29 * time.Second)
	h.expectDeleted("10:00:59")
	h.step(time.Second)
	h.expectDeleted("10:01:00: 60s after check appeared", "web")
}

func TestAPodToleratingTheRemainingTaintsForEverKeepsRunning(t *testing.T) {
	h := newHarness(t)
	h.setNode("node01")
	h.setPod(newPod("web", "node01", tolerateCheck(nil), tolerateOther(seconds(60))))
	h.setNode("node01", check, other)
	h.step(30 * time.Second)

	h.setNode("node01", check)
	h.expectLog("pod tolerates every NoExecute taint of node01 for ever: eviction cancelled")
	h.step(time.Hour)
	h.expectDeleted("check is tolerated for ever")
}

func TestAPodDeletedOrTerminatingBeforeItsDeadlineIsForgotten(t *testing.T) {
	h := newHarness(t)
	h.setNode("node01")
	h.setPod(newPod("web-deleted", "node01", tolerateCheck(seconds(60))))
	h.setPod(newPod("web-terminating", "node01", tolerateCheck(seconds(60))))
	h.setNode("node01", check)

	h.deletePod("web-deleted")
	terminating := newPod("web-terminating", "node01", tolerateCheck(seconds(60)))
	terminating.DeletionTimestamp = &metav1.Time{Time: h.clk.Now()}
	h.setPod(terminating)
	h.expectLog("pod deleted: scheduled eviction dropped")
	h.expectLog("pod is terminating: scheduled eviction dropped")
	if len(h.ctrl.countdown) != 0 {
		t.Errorf("countdowns left: %v", h.ctrl.countdown)
	}
	h.step(time.Hour)
	h.expectDeleted("neither pod is there to evict any more")
}

func TestATerminatingPodIsNotDeletedAgain(t *testing.T) {
	h := newHarness(t)
	h.setNode("node01", check)
	pod := newPod("web", "node01")
	pod.DeletionTimestamp = &metav1.Time{Time: h.clk.Now().Add(30 * time.Second)}
	h.setPod(pod)
	h.expectDeleted("the pod is already being deleted; its kubelet finishes the job")
}

func TestAFailedDeleteIsRetriedAndAGoneOrReplacedPodIsNot(t *testing.T) {
	tests := []struct {
		name     string
		code     int
		attempts int
	}{
		{"a DELETE the server fails is retried after a backoff", http.StatusInternalServerError, 2},
		{"a pod already gone (404) is not retried", http.StatusNotFound, 1},
		{"a pod replaced by a new one with the same name (409 on the UID precondition) is not retried", http.StatusConflict, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.api.code = func(n int) int {
				if n == 1 {
					return tt.code
				}
				return http.StatusOK
			}
			h.setNode("node01")
			h.setPod(newPod("web", "node01"))
			h.setNode("node01", check)
			h.step(time.Second) // far more than the first retry's 5ms
			if got := len(h.deleted()); got != tt.attempts {
				t.Errorf("%d DELETE requests, want %d", got, tt.attempts)
			}
		})
	}
}
