// Package workqueue is the queue between a controller's informer handlers
// and its workers, with client-go's guarantees:
//
//   - an item is processed by one worker at a time, however often it is added;
//   - an item added while it is being processed is processed again after
//     Done, so no change is lost;
//   - an item added many times before a worker takes it is processed once,
//     which is why handlers enqueue keys, not objects;
//   - a failing item is retried with per-item exponential backoff.
//
// Pipeline: handler → Add(key) → Get → sync(key) → Done(key), and on error
// AddRateLimited(key), on success Forget(key).
//
// Where things live:
//
//	file        what it holds
//	queue.go    the Queue: Add, AddAfter, AddRateLimited and its backoff, Forget, Get, Done, ShutDown
//	process.go  the worker loop over it: Work runs ProcessNext until shutdown; ProcessNext is Get, sync, then Forget or AddRateLimited, then Done
//	metrics.go  NewNamed and MetricsProvider: client-go's workqueue_* series (depth, adds, queue and work durations, retries, unfinished work), labelled name=<queue>
package workqueue

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Backoff of a failing item: 5ms doubling up to 1000s, client-go's default
// per-item limiter. Short first retries absorb conflicts with other writers;
// the long cap keeps a permanently broken item from spinning.
const (
	baseDelay = 5 * time.Millisecond
	maxDelay  = 1000 * time.Second
)

// Queue is a deduplicating, rate-limited work queue of keys.
type Queue[T comparable] struct {
	clock clock.WithDelayedExecution

	mu         sync.Mutex
	cond       *sync.Cond
	queue      []T            // waiting, in order
	dirty      map[T]struct{} // waiting or re-added while processing
	processing map[T]struct{} // taken by a worker, not yet Done
	failures   map[T]int      // consecutive AddRateLimited calls
	shutdown   bool
	metrics    *queueMetrics[T] // nil unless NewNamed was given a provider
}

// clockWithDelay is the clock a queue needs: now, and timers for AddAfter.
type clockWithDelay = clock.WithDelayedExecution

// New returns a queue; clk may be nil for the real clock (tests pass a fake).
func New[T comparable](clk clock.WithDelayedExecution) *Queue[T] {
	if clk == nil {
		clk = clock.RealClock{}
	}
	q := &Queue[T]{clock: clk, dirty: map[T]struct{}{}, processing: map[T]struct{}{}, failures: map[T]int{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add queues item unless it is already waiting.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	if _, ok := q.dirty[item]; ok {
		return
	}
	if q.metrics != nil { // the clock only when needed: a fake clock's AfterFunc calls Add holding its lock
		q.metrics.added(item, q.clock.Now())
	}
	q.dirty[item] = struct{}{}
	if _, ok := q.processing[item]; ok {
		return // Done will queue it
	}
	q.queue = append(q.queue, item)
	q.cond.Signal()
}

// AddAfter adds item once d has passed.
func (q *Queue[T]) AddAfter(item T, d time.Duration) {
	if d <= 0 {
		q.Add(item)
		return
	}
	q.clock.AfterFunc(d, func() { q.Add(item) })
}

// AddRateLimited re-adds a failed item after its backoff: 5ms, 10ms, 20ms...
func (q *Queue[T]) AddRateLimited(item T) {
	q.mu.Lock()
	n := q.failures[item]
	q.failures[item] = n + 1
	q.metrics.retried()
	q.mu.Unlock()
	d := baseDelay << min(n, 40)
	if d > maxDelay || d <= 0 {
		d = maxDelay
	}
	q.AddAfter(item, d)
}

// Forget resets item's backoff after a success.
func (q *Queue[T]) Forget(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.failures, item)
}

// NumRequeues is how many times item failed in a row.
func (q *Queue[T]) NumRequeues(item T) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failures[item]
}

// Get blocks for the next item; shutdown is true once the queue is shut
// down and drained, and the worker should return.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) == 0 && !q.shutdown {
		q.cond.Wait()
	}
	if len(q.queue) == 0 {
		return item, true
	}
	item, q.queue = q.queue[0], q.queue[1:]
	q.processing[item] = struct{}{}
	delete(q.dirty, item)
	if q.metrics != nil {
		q.metrics.taken(item, q.clock.Now())
	}
	return item, false
}

// Done marks item processed; if it was added meanwhile it is queued again.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, item)
	if q.metrics != nil {
		q.metrics.done(item, q.clock.Now())
	}
	if _, ok := q.dirty[item]; ok {
		q.queue = append(q.queue, item)
		q.cond.Signal()
	}
}

// Len is the number of waiting items.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// ShutDown makes Get return shutdown=true to every worker once the queue is
// empty; later Adds are dropped.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
	q.cond.Broadcast()
}
