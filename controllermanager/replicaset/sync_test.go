package replicaset

import (
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// podOpt shapes a test pod.
type podOpt func(*corev1.Pod)

func onNode(n string) podOpt          { return func(p *corev1.Pod) { p.Spec.NodeName = n } }
func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }
func createdAt(d time.Duration) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t0.Add(d)) }
}
func terminating() podOpt {
	return func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }
}
func ready(since time.Duration) podOpt    { return condition(corev1.ConditionTrue, since) }
func notReady(since time.Duration) podOpt { return condition(corev1.ConditionFalse, since) }

func condition(s corev1.ConditionStatus, since time.Duration) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions,
			corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			corev1.PodCondition{Type: corev1.PodReady, Status: s, LastTransitionTime: metav1.NewTime(t0.Add(since))})
	}
}

func newTestPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: metav1.NewTime(t0)},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func names(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestPodsToDelete(t *testing.T) {
	running := func(name string, opts ...podOpt) *corev1.Pod {
		return newTestPod(name, append([]podOpt{onNode("node01"), phase(corev1.PodRunning)}, opts...)...)
	}
	tests := []struct {
		name string
		pods []*corev1.Pod
		n    int
		want []string
	}{
		{
			name: "a pod not yet scheduled goes before one on a node",
			pods: []*corev1.Pod{running("scheduled", ready(0)), newTestPod("unscheduled")},
			n:    1, want: []string{"unscheduled"},
		},
		{
			name: "an unscheduled pod goes first even if it is older",
			pods: []*corev1.Pod{newTestPod("bound", onNode("node01"), createdAt(time.Hour)), newTestPod("unscheduled", createdAt(0))},
			n:    1, want: []string{"unscheduled"},
		},
		{
			name: "a pending pod goes before a running one",
			pods: []*corev1.Pod{running("running"), newTestPod("pending", onNode("node01"))},
			n:    1, want: []string{"pending"},
		},
		{
			name: "a pod in Unknown phase goes after pending and before running",
			pods: []*corev1.Pod{running("running"), newTestPod("unknown", onNode("node01"), phase(corev1.PodUnknown)), newTestPod("pending", onNode("node01"))},
			n:    3, want: []string{"pending", "unknown", "running"},
		},
		{
			name: "a pod that is not ready goes before a ready one",
			pods: []*corev1.Pod{running("ready", ready(0)), running("not-ready", notReady(0))},
			n:    1, want: []string{"not-ready"},
		},
		{
			name: "a running pod with no Ready condition counts as not ready",
			pods: []*corev1.Pod{running("ready", ready(0)), running("no-condition")},
			n:    1, want: []string{"no-condition"},
		},
		{
			name: "among equals, the newest goes first",
			pods: []*corev1.Pod{
				running("old", ready(0), createdAt(0)),
				running("newest", ready(0), createdAt(2*time.Minute)),
				running("newer", ready(0), createdAt(time.Minute)),
			},
			n: 2, want: []string{"newest", "newer"},
		},
		{
			name: "scheduling outranks phase, phase outranks readiness, readiness outranks age",
			pods: []*corev1.Pod{
				running("ready-new", ready(0), createdAt(time.Hour)),
				running("ready-old", ready(0)),
				running("not-ready"),
				newTestPod("pending-on-node", onNode("node01")),
				newTestPod("unscheduled-old", createdAt(-time.Hour)),
			},
			n:    5,
			want: []string{"unscheduled-old", "pending-on-node", "not-ready", "ready-new", "ready-old"},
		},
		{
			name: "asking for none deletes none",
			pods: []*corev1.Pod{newTestPod("a")},
			n:    0, want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := names(tt.pods)
			if got := names(podsToDelete(tt.pods, tt.n)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("podsToDelete = %v, want %v", got, tt.want)
			}
			if after := names(tt.pods); !reflect.DeepEqual(before, after) {
				t.Errorf("podsToDelete reordered its input: %v, was %v", after, before)
			}
		})
	}
}

func TestSlowStartBatch(t *testing.T) {
	tests := []struct {
		name      string
		count     int
		failCall  int // the call (numbered from 1) that fails; 0: none
		wantDone  int
		wantCalls int
	}{
		{name: "nothing to do calls nothing", count: 0, wantDone: 0, wantCalls: 0},
		{name: "ten successes in batches of 1, 2, 4 and the remaining 3", count: 10, wantDone: 10, wantCalls: 10},
		{name: "a failing first call stops everything after one request", count: 10, failCall: 1, wantDone: 0, wantCalls: 1},
		{name: "a failure in the batch of 2 stops before the batch of 4, counting its other success", count: 10, failCall: 2, wantDone: 2, wantCalls: 3},
		{name: "a failure in the batch of 4 stops before the next batch", count: 20, failCall: 5, wantDone: 6, wantCalls: 7},
		{name: "a failure in the last, shortened batch reports the others", count: 5, failCall: 5, wantDone: 4, wantCalls: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			boom := errors.New("quota exceeded")
			done, err := slowStartBatch(tt.count, func() error {
				if int(calls.Add(1)) == tt.failCall {
					return boom
				}
				return nil
			})
			if done != tt.wantDone {
				t.Errorf("done = %d, want %d", done, tt.wantDone)
			}
			if int(calls.Load()) != tt.wantCalls {
				t.Errorf("fn called %d times, want %d", calls.Load(), tt.wantCalls)
			}
			if wantErr := tt.failCall != 0; (err != nil) != wantErr || (err != nil && !errors.Is(err, boom)) {
				t.Errorf("err = %v, want the failing call's error: %v", err, wantErr)
			}
		})
	}
}

func TestSlowStartBatchRunsEachBatchConcurrentlyAndTheNextOnlyAfterIt(t *testing.T) {
	// Every call reports that it started, then blocks until released. The
	// test receives a whole batch of starts before releasing any: that
	// only happens if the batch runs concurrently.
	startedc := make(chan struct{}) // fn → test: a call started
	releasec := make(chan struct{}) // test → fn: the call may return
	type result struct {
		done int
		err  error
	}
	resultc := make(chan result, 1)
	go func() {
		done, err := slowStartBatch(10, func() error {
			startedc <- struct{}{}
			<-releasec
			return nil
		})
		resultc <- result{done, err}
	}()
	for _, n := range []int{1, 2, 4, 3} {
		for i := range n {
			select {
			case <-startedc:
			case <-time.After(5 * time.Second):
				close(releasec) // unblock the calls so the goroutine can end
				t.Fatalf("in the batch of %d, only %d calls started together", n, i)
			}
		}
		// The next batch must not start before this one is released.
		select {
		case <-startedc:
			t.Fatalf("a call started while the batch of %d was still running", n)
		default:
		}
		for range n {
			releasec <- struct{}{}
		}
	}
	select {
	case r := <-resultc:
		if r.done != 10 || r.err != nil {
			t.Fatalf("slowStartBatch = %d, %v; want 10, nil", r.done, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("slowStartBatch did not return after every call did")
	}
}

func TestFilterActive(t *testing.T) {
	pods := []*corev1.Pod{
		newTestPod("pending"),
		newTestPod("running", phase(corev1.PodRunning)),
		newTestPod("unknown", phase(corev1.PodUnknown)),
		newTestPod("succeeded", phase(corev1.PodSucceeded)),
		newTestPod("failed", phase(corev1.PodFailed)),
		newTestPod("terminating", phase(corev1.PodRunning), terminating()),
	}
	want := []string{"pending", "running", "unknown"}
	if got := names(filterActive(pods)); !reflect.DeepEqual(got, want) {
		t.Errorf("filterActive = %v, want %v (finished and terminating pods no longer count)", got, want)
	}
}
