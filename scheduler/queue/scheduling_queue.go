// Package queue is the scheduler's waiting room: kube-scheduler's
// PriorityQueue. Every unbound pod the scheduler is responsible for is in
// exactly one of three places while it waits:
//
//	activeQ        ready to be tried: a heap, higher spec.priority first,
//	               then first come, first served. Pop takes from here.
//	backoffQ       tried and failed recently: waits out its backoff
//	               (1s, 2s, 4s ... up to 10s by attempt), then goes to activeQ.
//	unschedulable  fits no node; waits for a cluster event that one of the
//	               plugins that rejected it registered for (a node added, a
//	               pod deleted...), then goes to backoffQ or activeQ.
//
// A pod that waits in unschedulable longer than
// PodMaxInUnschedulablePodsDuration (5 minutes) is moved anyway: the
// backstop for changes no plugin watches. A pod being scheduled ("in
// flight") is in none of them.
//
// The queue also remembers the pods nominated to nodes by preemption
// (nominator.go), which the scheduler counts on those nodes for pods of
// lower or equal priority.
//
// Pipeline: informer handler → Add / Update / Delete; scheduler → Pop →
// (fits) nothing more, or (fails) AddUnschedulableIfNotPresent /
// AddBackoffIfNotPresent; cluster events → MoveAllToActiveOrBackoffQueue;
// Run moves pods whose time has come.
//
// Where things live:
//
//	file                 what it holds
//	scheduling_queue.go  the PriorityQueue: its three places, Add/Update/Delete, Pop, backoff, the moves on cluster events and Run
//	heap.go              keyedHeap, the heap under activeQ and backoffQ whose items can also be found by key
//	nominator.go         the pods nominated to nodes by preemption
package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/scheduler/framework"
)

// kube-scheduler's defaults (podInitialBackoffSeconds,
// podMaxBackoffSeconds, podMaxInUnschedulablePodsDuration). The backoff
// keeps a pod that keeps failing from monopolising the scheduler, yet a
// pod that fails once is retried a second later; the 10s cap bounds how
// long a pod waits once the cluster has changed for it.
const (
	DefaultPodInitialBackoff                 = 1 * time.Second
	DefaultPodMaxBackoff                     = 10 * time.Second
	DefaultPodMaxInUnschedulablePodsDuration = 5 * time.Minute
)

// How often Run looks for pods to move: kube-scheduler's intervals. Every
// second for finished backoffs (the smallest backoff); every 30s for pods
// stuck in unschedulable, whose limit is minutes.
const (
	backoffFlushInterval       = 1 * time.Second
	unschedulableFlushInterval = 30 * time.Second
)

// ErrClosed is returned by Pop once the queue is closed.
var ErrClosed = errors.New("scheduling queue is closed")

// Options configure a PriorityQueue. Zero values mean the defaults.
type Options struct {
	Clock                             clock.WithTicker
	PodInitialBackoff                 time.Duration
	PodMaxBackoff                     time.Duration
	PodMaxInUnschedulablePodsDuration time.Duration
	// PluginEvents maps a plugin to the events after which a pod it
	// rejected may fit (framework.Framework.EventsToRegister).
	PluginEvents map[string][]framework.ClusterEvent
}

// PriorityQueue is the scheduling queue. It is safe for concurrent use:
// informer handlers add, the scheduling loop pops, binding goroutines
// requeue.
type PriorityQueue struct {
	clock                             clock.WithTicker
	podInitialBackoff                 time.Duration
	podMaxBackoff                     time.Duration
	podMaxInUnschedulablePodsDuration time.Duration
	pluginEvents                      map[string][]framework.ClusterEvent

	mu            sync.Mutex
	cond          *sync.Cond // signalled when activeQ gains a pod or the queue closes
	activeQ       *keyedHeap[*framework.QueuedPodInfo]
	backoffQ      *keyedHeap[*framework.QueuedPodInfo]
	unschedulable map[string]*framework.QueuedPodInfo
	// schedulingCycle counts Pops. moveRequestCycle is the cycle during
	// which pods were last moved by a cluster event: a pod whose attempt
	// began at or before it may have missed the event that would have
	// helped it, so it goes to backoffQ instead of unschedulable.
	schedulingCycle  int64
	moveRequestCycle int64
	closed           bool
	// nominator: the pods nominated to nodes by preemption (nominator.go).
	nominator nominator
}

// New returns an empty queue.
func New(opts Options) *PriorityQueue {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.PodInitialBackoff <= 0 {
		opts.PodInitialBackoff = DefaultPodInitialBackoff
	}
	if opts.PodMaxBackoff <= 0 {
		opts.PodMaxBackoff = DefaultPodMaxBackoff
	}
	if opts.PodMaxInUnschedulablePodsDuration <= 0 {
		opts.PodMaxInUnschedulablePodsDuration = DefaultPodMaxInUnschedulablePodsDuration
	}
	q := &PriorityQueue{
		clock:                             opts.Clock,
		podInitialBackoff:                 opts.PodInitialBackoff,
		podMaxBackoff:                     opts.PodMaxBackoff,
		podMaxInUnschedulablePodsDuration: opts.PodMaxInUnschedulablePodsDuration,
		pluginEvents:                      opts.PluginEvents,
		unschedulable:                     map[string]*framework.QueuedPodInfo{},
		moveRequestCycle:                  -1,
		nominator:                         newNominator(),
	}
	q.cond = sync.NewCond(&q.mu)
	key := func(p *framework.QueuedPodInfo) string { return p.Key }
	q.activeQ = newKeyedHeap(key, activeLess)
	q.backoffQ = newKeyedHeap(key, q.backoffLess)
	return q
}

// activeLess is kube-scheduler's PrioritySort plugin: higher spec.priority
// first; among equals, the pod queued earlier.
func activeLess(a, b *framework.QueuedPodInfo) bool {
	pa, pb := a.Priority, b.Priority
	return pa > pb || (pa == pb && a.Timestamp.Before(b.Timestamp))
}

// backoffLess orders the backoff queue by when each backoff ends.
func (q *PriorityQueue) backoffLess(a, b *framework.QueuedPodInfo) bool {
	return q.backoffExpiry(a).Before(q.backoffExpiry(b))
}

// Add queues a new unbound pod (seed step 9: the scheduler has seen it).
func (q *PriorityQueue) Add(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.newQueuedPodInfo(framework.NewPodInfo(pod))
	delete(q.unschedulable, p.Key)
	q.backoffQ.Delete(p.Key)
	q.activeQ.AddOrUpdate(p)
	q.nominator.add(p.PodInfo, "")
	q.cond.Broadcast()
}

func (q *PriorityQueue) newQueuedPodInfo(pi *framework.PodInfo) *framework.QueuedPodInfo {
	return &framework.QueuedPodInfo{PodInfo: pi, Timestamp: q.clock.Now()}
}

// Update replaces a waiting pod with its new version. A pod waiting in
// unschedulable whose spec, labels or annotations changed is moved out,
// since it may fit now (a toleration was added, say); a change of status
// only (such as the PodScheduled condition the scheduler itself writes)
// leaves it where it is. A pod in no queue (being scheduled, or assumed
// and being bound) is added to activeQ: the scheduler skips it there if
// its binding is under way.
// Its nomination follows its status.nominatedNodeName (nominator.update).
func (q *PriorityQueue) Update(oldPod, newPod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pi := framework.NewPodInfo(newPod)
	q.nominator.update(oldPod, pi)
	if p, ok := q.activeQ.Get(pi.Key); ok {
		p.PodInfo = pi
		q.activeQ.AddOrUpdate(p)
		return
	}
	if p, ok := q.backoffQ.Get(pi.Key); ok {
		p.PodInfo = pi
		q.backoffQ.AddOrUpdate(p)
		return
	}
	if p, ok := q.unschedulable[pi.Key]; ok {
		p.PodInfo = pi
		if isPodUpdated(oldPod, newPod) {
			q.moveLocked(p)
		}
		return
	}
	q.activeQ.AddOrUpdate(q.newQueuedPodInfo(pi))
	q.cond.Broadcast()
}

// isPodUpdated reports a change that could affect scheduling: anything
// but status and bookkeeping metadata.
func isPodUpdated(old, cur *corev1.Pod) bool {
	return !equality.Semantic.DeepEqual(old.Spec, cur.Spec) ||
		!equality.Semantic.DeepEqual(old.Labels, cur.Labels) ||
		!equality.Semantic.DeepEqual(old.Annotations, cur.Annotations)
}

// Delete forgets a pod wherever it waits, and its nomination: it was
// deleted, or bound.
func (q *PriorityQueue) Delete(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := framework.PodKey(pod)
	q.activeQ.Delete(key)
	q.backoffQ.Delete(key)
	delete(q.unschedulable, key)
	q.nominator.delete(key)
}

// Pop blocks until a pod is in activeQ and takes the first one, or returns
// ErrClosed once the queue is closed.
func (q *PriorityQueue) Pop() (*framework.QueuedPodInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.activeQ.Len() == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, ErrClosed
	}
	p, _ := q.activeQ.Pop()
	p.Attempts++
	q.schedulingCycle++
	if p.InitialAttemptTimestamp == nil {
		now := q.clock.Now()
		p.InitialAttemptTimestamp = &now
	}
	return p, nil
}

// SchedulingCycle is the number of Pops so far: the cycle of the pod
// popped last.
func (q *PriorityQueue) SchedulingCycle() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.schedulingCycle
}

// AddUnschedulableIfNotPresent puts back a pod that no node fits (its
// UnschedulablePlugins say which plugins rejected it). It waits in
// unschedulable for a cluster event, unless an event came while it was
// being scheduled (podSchedulingCycle ≤ moveRequestCycle): that event may
// already have made room, so it only waits out its backoff. If the pod was
// re-added meanwhile (it was updated), the newer entry stays.
func (q *PriorityQueue) AddUnschedulableIfNotPresent(p *framework.QueuedPodInfo, podSchedulingCycle int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.checkNotPresent(p.Key); err != nil {
		return err
	}
	p.Timestamp = q.clock.Now()
	if q.moveRequestCycle >= podSchedulingCycle {
		q.backoffQ.AddOrUpdate(p)
		return nil
	}
	q.unschedulable[p.Key] = p
	return nil
}

// AddBackoffIfNotPresent puts back a pod whose attempt failed with an
// error (a failed binding, say): it is retried after its backoff, without
// waiting for any event.
func (q *PriorityQueue) AddBackoffIfNotPresent(p *framework.QueuedPodInfo) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.checkNotPresent(p.Key); err != nil {
		return err
	}
	p.Timestamp = q.clock.Now()
	q.backoffQ.AddOrUpdate(p)
	return nil
}

func (q *PriorityQueue) checkNotPresent(key string) error {
	if q.activeQ.Has(key) || q.backoffQ.Has(key) || q.unschedulable[key] != nil {
		return fmt.Errorf("pod %s is already in the scheduling queue", key)
	}
	return nil
}

// MoveAllToActiveOrBackoffQueue moves the unschedulable pods that event
// may help: those rejected by a plugin that registered for it, and those
// that no plugin rejected (there were no nodes). Each goes to backoffQ if
// its backoff has not ended yet, else to activeQ. It returns how many
// moved.
func (q *PriorityQueue) MoveAllToActiveOrBackoffQueue(event framework.ClusterEvent) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.interesting(event) {
		return 0
	}
	moved := 0
	for _, p := range q.unschedulable {
		if q.podMatchesEvent(p, event) {
			q.moveLocked(p)
			moved++
		}
	}
	q.moveRequestCycle = q.schedulingCycle
	return moved
}

// interesting reports whether any waiting pod could care about event: a
// plugin registered for it, or it concerns nodes (which a pod that found
// no nodes at all is waiting for). Other events, such as a pod being bound
// while no plugin watches bound pods, change nothing, not even
// moveRequestCycle.
func (q *PriorityQueue) interesting(event framework.ClusterEvent) bool {
	if event.Resource == framework.WildCard || event.Resource == framework.Node {
		return true
	}
	for _, events := range q.pluginEvents {
		for _, e := range events {
			if e.Match(event) {
				return true
			}
		}
	}
	return false
}

func (q *PriorityQueue) podMatchesEvent(p *framework.QueuedPodInfo, event framework.ClusterEvent) bool {
	if event.Resource == framework.WildCard || p.UnschedulablePlugins.Len() == 0 {
		return true
	}
	for plugin := range p.UnschedulablePlugins {
		for _, e := range q.pluginEvents[plugin] {
			if e.Match(event) {
				return true
			}
		}
	}
	return false
}

// moveLocked moves p out of unschedulable into backoffQ or activeQ.
func (q *PriorityQueue) moveLocked(p *framework.QueuedPodInfo) {
	delete(q.unschedulable, p.Key)
	if q.isPodBackingOff(p) {
		q.backoffQ.AddOrUpdate(p)
		return
	}
	q.activeQ.AddOrUpdate(p)
	q.cond.Broadcast()
}

// backoffDuration is podInitialBackoff × 2^(attempts-1), at most
// podMaxBackoff: 1s, 2s, 4s, 8s, 10s, 10s...
func (q *PriorityQueue) backoffDuration(p *framework.QueuedPodInfo) time.Duration {
	d := q.podInitialBackoff
	for i := 1; i < p.Attempts; i++ {
		if d >= q.podMaxBackoff/2 {
			return q.podMaxBackoff
		}
		d *= 2
	}
	return min(d, q.podMaxBackoff)
}

func (q *PriorityQueue) backoffExpiry(p *framework.QueuedPodInfo) time.Time {
	return p.Timestamp.Add(q.backoffDuration(p))
}

func (q *PriorityQueue) isPodBackingOff(p *framework.QueuedPodInfo) bool {
	return q.backoffExpiry(p).After(q.clock.Now())
}

// flushBackoffQCompleted moves the pods whose backoff has ended to activeQ.
func (q *PriorityQueue) flushBackoffQCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	moved := false
	for {
		p, ok := q.backoffQ.Peek()
		if !ok || q.isPodBackingOff(p) {
			break
		}
		q.backoffQ.Pop()
		q.activeQ.AddOrUpdate(p)
		moved = true
	}
	if moved {
		q.cond.Broadcast()
	}
}

// flushUnschedulablePodsLeftover moves the pods that have waited in
// unschedulable longer than podMaxInUnschedulablePodsDuration.
func (q *PriorityQueue) flushUnschedulablePodsLeftover() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	moved := 0
	for _, p := range q.unschedulable {
		if now.Sub(p.Timestamp) > q.podMaxInUnschedulablePodsDuration {
			q.moveLocked(p)
			moved++
		}
	}
	if moved > 0 {
		q.moveRequestCycle = q.schedulingCycle
	}
	return moved
}

// Run moves pods whose backoff ended (every second) and pods stuck in
// unschedulable (every 30s) until ctx ends. The scheduler runs it on a
// goroutine of its own.
func (q *PriorityQueue) Run(ctx context.Context) {
	backoff := q.clock.NewTicker(backoffFlushInterval)
	defer backoff.Stop()
	leftover := q.clock.NewTicker(unschedulableFlushInterval)
	defer leftover.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-backoff.C():
			q.flushBackoffQCompleted()
		case <-leftover.C():
			q.flushUnschedulablePodsLeftover()
		}
	}
}

// Close wakes Pop, which returns ErrClosed from then on.
func (q *PriorityQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// Counts says how many pods wait where: for logs and tests.
type Counts struct{ Active, Backoff, Unschedulable int }

// Counts returns the sizes of the three queues.
func (q *PriorityQueue) Counts() Counts {
	q.mu.Lock()
	defer q.mu.Unlock()
	return Counts{q.activeQ.Len(), q.backoffQ.Len(), len(q.unschedulable)}
}
