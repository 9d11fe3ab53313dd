package queue

import (
	"context"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

var pluginEvents = map[string][]framework.ClusterEvent{
	"NodeResourcesFit": {
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable},
		{Resource: framework.AssignedPod, ActionType: framework.Delete},
	},
	"TaintToleration": {{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}},
}

func newTestQueue() (*PriorityQueue, *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	return New(Options{Clock: clk, PluginEvents: pluginEvents}), clk
}

func pop(t *testing.T, q *PriorityQueue) *framework.QueuedPodInfo {
	t.Helper()
	if q.Counts().Active == 0 {
		t.Fatal("activeQ is empty: Pop would block")
	}
	p, err := q.Pop()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// failUnschedulable pops the next pod and puts it back as rejected by plugins.
func failUnschedulable(t *testing.T, q *PriorityQueue, plugins ...string) *framework.QueuedPodInfo {
	t.Helper()
	p := pop(t, q)
	p.UnschedulablePlugins = sets.New(plugins...)
	if err := q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle()); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPopOrder(t *testing.T) {
	tests := []struct {
		name string
		add  []*corev1.Pod
		want []string
	}{
		{"pods of equal priority come out first come, first served",
			[]*corev1.Pod{st.MakePod("a").Obj(), st.MakePod("b").Obj(), st.MakePod("c").Obj()}, []string{"a", "b", "c"}},
		{"a pod of higher priority overtakes the ones queued before it",
			[]*corev1.Pod{st.MakePod("low").Priority(0).Obj(), st.MakePod("high").Priority(1000).Obj(), st.MakePod("mid").Priority(10).Obj()},
			[]string{"high", "mid", "low"}},
		{"a pod without priority counts as 0 and negative priorities go last",
			[]*corev1.Pod{st.MakePod("neg").Priority(-5).Obj(), st.MakePod("none").Obj(), st.MakePod("zero").Priority(0).Obj()},
			[]string{"none", "zero", "neg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newTestQueue()
			for _, p := range tt.add {
				q.Add(p)
				clk.Step(time.Millisecond) // distinct arrival times
			}
			for _, want := range tt.want {
				if got := pop(t, q); got.Pod.Name != want {
					t.Fatalf("popped %s, want %s", got.Pod.Name, want)
				}
			}
		})
	}
}

func TestUnschedulablePodsMoveOnlyOnEventsThatMayHelp(t *testing.T) {
	tests := []struct {
		name     string
		rejected []string // plugins that rejected the pod
		event    framework.ClusterEvent
		moves    bool
	}{
		{"a pod short of cpu is retried when a node is added", []string{"NodeResourcesFit"}, framework.NodeAdd, true},
		{"a pod short of cpu is retried when a bound pod is deleted", []string{"NodeResourcesFit"}, framework.AssignedPodDelete, true},
		{"a pod short of cpu is not retried when a node's taints change",
			[]string{"NodeResourcesFit"}, framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint}, false},
		{"a pod blocked by a taint is retried when a node's taints change",
			[]string{"TaintToleration"}, framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint | framework.UpdateNodeLabel}, true},
		{"a pod blocked by a taint is not retried when a bound pod is deleted", []string{"TaintToleration"}, framework.AssignedPodDelete, false},
		{"a pod rejected by both is retried when either may help", []string{"TaintToleration", "NodeResourcesFit"}, framework.AssignedPodDelete, true},
		{"a pod that found no nodes at all is retried on any node event", nil, framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel}, true},
		{"the unschedulable timeout moves every pod", []string{"TaintToleration"}, framework.UnschedulableTimeout, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newTestQueue()
			q.Add(st.MakePod("web-1").Obj())
			failUnschedulable(t, q, tt.rejected...)
			if c := q.Counts(); c.Unschedulable != 1 {
				t.Fatalf("counts after failure = %+v, want the pod unschedulable", c)
			}
			clk.Step(time.Minute) // the backoff is over
			moved := q.MoveAllToActiveOrBackoffQueue(tt.event)
			if (moved == 1) != tt.moves {
				t.Fatalf("moved %d pods, want moves=%v", moved, tt.moves)
			}
			if tt.moves && q.Counts().Active != 1 {
				t.Errorf("counts = %+v, want the pod in activeQ", q.Counts())
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod("web-1").Obj())

	// Attempt 1 fails; an event comes at once: the pod must still wait 1s.
	failUnschedulable(t, q, "NodeResourcesFit")
	q.MoveAllToActiveOrBackoffQueue(framework.NodeAdd)
	if c := q.Counts(); c.Backoff != 1 {
		t.Fatalf("counts = %+v, want the pod backing off", c)
	}
	clk.Step(999 * time.Millisecond)
	q.flushBackoffQCompleted()
	if c := q.Counts(); c.Backoff != 1 {
		t.Fatalf("after 999ms counts = %+v, want the pod still backing off", c)
	}
	clk.Step(time.Millisecond)
	q.flushBackoffQCompleted()
	if c := q.Counts(); c.Active != 1 {
		t.Fatalf("after 1s counts = %+v, want the pod active", c)
	}

	// The backoff doubles per attempt up to 10s: attempts 2..6 wait 2, 4, 8, 10, 10 seconds.
	for attempt, want := range map[int]time.Duration{2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 6: 10 * time.Second} {
		p := &framework.QueuedPodInfo{Attempts: attempt}
		if got := q.backoffDuration(p); got != want {
			t.Errorf("backoff of attempt %d = %v, want %v", attempt, got, want)
		}
	}
}

func TestAnErrorSendsThePodToBackoffWithoutAnEvent(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod("web-1").Obj())
	p := pop(t, q)
	if err := q.AddBackoffIfNotPresent(p); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	q.flushBackoffQCompleted()
	if got := pop(t, q); got.Attempts != 2 {
		t.Errorf("attempts = %d, want 2", got.Attempts)
	}
}

func TestAnEventDuringTheAttemptSendsThePodToBackoffNotUnschedulable(t *testing.T) {
	q, _ := newTestQueue()
	q.Add(st.MakePod("web-1").Obj())
	p := pop(t, q)
	cycle := q.SchedulingCycle()
	// While web-1 was being scheduled, a node was added: it may fit there.
	q.MoveAllToActiveOrBackoffQueue(framework.NodeAdd)
	p.UnschedulablePlugins = sets.New("NodeResourcesFit")
	if err := q.AddUnschedulableIfNotPresent(p, cycle); err != nil {
		t.Fatal(err)
	}
	if c := q.Counts(); c.Backoff != 1 || c.Unschedulable != 0 {
		t.Errorf("counts = %+v, want the pod backing off", c)
	}
}

func TestPodsStuckInUnschedulableAreRetriedAfterFiveMinutes(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod("web-1").Obj())
	failUnschedulable(t, q, "TaintToleration")
	clk.Step(4 * time.Minute)
	if n := q.flushUnschedulablePodsLeftover(); n != 0 {
		t.Fatalf("moved %d pods after 4 minutes, want 0", n)
	}
	clk.Step(time.Minute + time.Second)
	if n := q.flushUnschedulablePodsLeftover(); n != 1 || q.Counts().Active != 1 {
		t.Fatalf("moved %d pods after 5 minutes (counts %+v), want the pod active", n, q.Counts())
	}
}

func TestRunFlushesOnItsTickers(t *testing.T) {
	q, clk := newTestQueue()
	q.Add(st.MakePod("web-1").Obj())
	p := pop(t, q)
	if err := q.AddBackoffIfNotPresent(p); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	for !clk.HasWaiters() { // wait until Run has created its tickers
		runtime.Gosched()
	}
	clk.Step(time.Second)
	if got := popBlocking(t, q); got.Pod.Name != "web-1" {
		t.Fatalf("popped %s", got.Pod.Name)
	}
}

func TestUpdate(t *testing.T) {
	t.Run("a status-only update leaves an unschedulable pod waiting", func(t *testing.T) {
		q, clk := newTestQueue()
		old := st.MakePod("web-1").Obj()
		q.Add(old)
		failUnschedulable(t, q, "TaintToleration")
		clk.Step(time.Minute)
		cur := old.DeepCopy()
		cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}
		q.Update(old, cur)
		if c := q.Counts(); c.Unschedulable != 1 {
			t.Fatalf("counts = %+v, want the pod still unschedulable", c)
		}
	})
	t.Run("an added toleration moves an unschedulable pod to activeQ", func(t *testing.T) {
		q, clk := newTestQueue()
		old := st.MakePod("web-1").Obj()
		q.Add(old)
		failUnschedulable(t, q, "TaintToleration")
		clk.Step(time.Minute)
		cur := old.DeepCopy()
		cur.Spec.Tolerations = []corev1.Toleration{{Key: "key1", Operator: corev1.TolerationOpExists}}
		q.Update(old, cur)
		if got := pop(t, q); len(got.Pod.Spec.Tolerations) != 1 {
			t.Fatal("popped the old version of the pod")
		}
	})
	t.Run("an update of a waiting pod replaces it in place", func(t *testing.T) {
		q, _ := newTestQueue()
		old := st.MakePod("web-1").Obj()
		q.Add(old)
		cur := old.DeepCopy()
		cur.Labels = map[string]string{"v": "2"}
		q.Update(old, cur)
		if c := q.Counts(); c.Active != 1 {
			t.Fatalf("counts = %+v, want one pod", c)
		}
		if got := pop(t, q); got.Pod.Labels["v"] != "2" {
			t.Fatal("popped the old version of the pod")
		}
	})
	t.Run("an update of a pod being scheduled queues it again, and the failed attempt does not add a second copy", func(t *testing.T) {
		q, _ := newTestQueue()
		old := st.MakePod("web-1").Obj()
		q.Add(old)
		p := pop(t, q)
		q.Update(old, old.DeepCopy())
		if err := q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle()); err == nil {
			t.Fatal("the pod was added twice")
		}
		if c := q.Counts(); c.Active != 1 || c.Unschedulable != 0 {
			t.Fatalf("counts = %+v", c)
		}
	})
}

func TestDeleteRemovesThePodWhereverItWaits(t *testing.T) {
	q, clk := newTestQueue()
	for _, name := range []string{"backoff", "unschedulable", "active"} {
		q.Add(st.MakePod(name).Obj())
		clk.Step(time.Millisecond)
	}
	if err := q.AddBackoffIfNotPresent(pop(t, q)); err != nil { // "backoff"
		t.Fatal(err)
	}
	failUnschedulable(t, q, "TaintToleration") // "unschedulable"
	if c := q.Counts(); c != (Counts{Active: 1, Backoff: 1, Unschedulable: 1}) {
		t.Fatalf("counts = %+v, want one pod in each queue", c)
	}
	for _, name := range []string{"active", "backoff", "unschedulable"} {
		q.Delete(st.MakePod(name).Obj())
	}
	if c := q.Counts(); c != (Counts{}) {
		t.Errorf("counts after deleting all = %+v", c)
	}
}

func TestCloseWakesPop(t *testing.T) {
	q, _ := newTestQueue()
	done := make(chan error)
	go func() {
		_, err := q.Pop()
		done <- err
	}()
	q.Close()
	if err := <-done; err != ErrClosed {
		t.Errorf("Pop after Close = %v, want ErrClosed", err)
	}
}

// popBlocking pops, failing the test if nothing arrives within 10s of
// real time (a deadline, not a sleep: it returns as soon as a pod does).
func popBlocking(t *testing.T, q *PriorityQueue) *framework.QueuedPodInfo {
	t.Helper()
	got := make(chan *framework.QueuedPodInfo, 1)
	go func() {
		p, _ := q.Pop()
		got <- p
	}()
	select {
	case p := <-got:
		return p
	case <-time.After(10 * time.Second):
		q.Close()
		t.Fatal("no pod became active")
		return nil
	}
}
