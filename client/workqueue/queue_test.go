package workqueue_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client/workqueue"
)

// wait bounds the waits on other goroutines; it is only reached on failure.
const wait = 5 * time.Second

func newQueue() (*workqueue.Queue[string], *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return workqueue.New[string](clk), clk
}

// drain takes every waiting item, marking each done.
func drain(q *workqueue.Queue[string]) []string {
	var out []string
	for q.Len() > 0 {
		item, _ := q.Get()
		out = append(out, item)
		q.Done(item)
	}
	return out
}

func TestQueueDeduplicatesWaitingItems(t *testing.T) {
	tests := []struct {
		name string
		adds []string
		want []string // what workers Get, in order
	}{
		{"an item added twice before a worker takes it is processed once", []string{"a", "a"}, []string{"a"}},
		{"items come out in the order they were first added", []string{"b", "a", "b", "c", "a"}, []string{"b", "a", "c"}},
		{"an empty queue gives nothing", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newQueue()
			for _, item := range tt.adds {
				q.Add(item)
			}
			if q.Len() != len(tt.want) {
				t.Errorf("Len = %d, want %d", q.Len(), len(tt.want))
			}
			if got := drain(q); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAnItemAddedWhileProcessingIsProcessedAgainAfterDoneNotConcurrently(t *testing.T) {
	q, _ := newQueue()
	q.Add("a")
	item, _ := q.Get()

	q.Add("a") // the object changed while a worker syncs it
	q.Add("a") // ... twice
	if q.Len() != 0 {
		t.Fatalf("Len = %d while a is being processed; a second worker could take it", q.Len())
	}

	// A second worker waits; it must get a only once the first is done.
	got := make(chan string)
	go func() {
		item, _ := q.Get()
		got <- item
	}()
	select {
	case item := <-got:
		t.Fatalf("a second worker got %q while a was being processed", item)
	default:
	}

	q.Done(item)
	select {
	case item := <-got:
		if item != "a" {
			t.Fatalf("second worker got %q, want a", item)
		}
	case <-time.After(wait):
		t.Fatal("a, re-added during processing, was not handed out after Done")
	}
	q.Done("a")
	if q.Len() != 0 {
		t.Errorf("Len = %d after the re-added item was processed once; want 0", q.Len())
	}
}

func TestDoneWithoutReAddDoesNotRequeue(t *testing.T) {
	q, _ := newQueue()
	q.Add("a")
	item, _ := q.Get()
	q.Done(item)
	if q.Len() != 0 {
		t.Errorf("Len = %d, want 0", q.Len())
	}
}

// readyAfter checks that item becomes ready exactly d from now: not a
// nanosecond earlier. It steps the fake clock and takes the item.
func readyAfter(t *testing.T, q *workqueue.Queue[string], clk *clocktesting.FakeClock, item string, d time.Duration) {
	t.Helper()
	clk.Step(d - time.Nanosecond)
	if q.Len() != 0 {
		t.Fatalf("%s was ready before %v", item, d)
	}
	clk.Step(time.Nanosecond) // the fake clock runs AfterFunc callbacks inside Step
	if q.Len() != 1 {
		t.Fatalf("%s was not ready after %v", item, d)
	}
	got, _ := q.Get()
	if got != item {
		t.Fatalf("got %q, want %q", got, item)
	}
	q.Done(got)
}

func TestAddRateLimitedBacksOffExponentially(t *testing.T) {
	q, clk := newQueue()
	// 5ms doubling: the 18th retry would be 5ms·2^18 ≈ 1311s, so it and
	// every later one wait the 1000s cap.
	var want []time.Duration
	for d, i := 5*time.Millisecond, 0; i < 20; d, i = 2*d, i+1 {
		want = append(want, min(d, 1000*time.Second))
	}
	for i, d := range want {
		t.Run(fmt.Sprintf("failure %d waits %v", i+1, d), func(t *testing.T) {
			q.AddRateLimited("a")
			if n := q.NumRequeues("a"); n != i+1 {
				t.Errorf("NumRequeues = %d, want %d", n, i+1)
			}
			readyAfter(t, q, clk, "a", d)
		})
	}
}

func TestForgetResetsTheBackoff(t *testing.T) {
	q, clk := newQueue()
	for _, d := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		q.AddRateLimited("a")
		readyAfter(t, q, clk, "a", d)
	}
	q.Forget("a")
	if n := q.NumRequeues("a"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d, want 0", n)
	}
	q.AddRateLimited("a")
	readyAfter(t, q, clk, "a", 5*time.Millisecond)
}

func TestBackoffIsPerItem(t *testing.T) {
	q, clk := newQueue()
	q.AddRateLimited("a")
	readyAfter(t, q, clk, "a", 5*time.Millisecond)
	q.AddRateLimited("a")
	q.AddRateLimited("b") // b's first failure: 5ms, whatever a's count
	readyAfter(t, q, clk, "b", 5*time.Millisecond)
	readyAfter(t, q, clk, "a", 5*time.Millisecond) // 10ms after a's second failure
}

func TestAddAfter(t *testing.T) {
	tests := []struct {
		name  string
		delay time.Duration
	}{
		{"an item added after 1s is ready after exactly 1s", time.Second},
		{"an item added after 0 is ready at once", 0},
		{"an item added after a negative delay is ready at once", -time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue()
			q.AddAfter("a", tt.delay)
			if tt.delay <= 0 {
				if q.Len() != 1 {
					t.Fatalf("Len = %d, want 1", q.Len())
				}
				return
			}
			readyAfter(t, q, clk, "a", tt.delay)
		})
	}
}

func TestAddAfterOfAWaitingItemIsDeduplicated(t *testing.T) {
	q, clk := newQueue()
	q.Add("a")
	q.AddAfter("a", time.Second)
	clk.Step(time.Second)
	if got := drain(q); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("got %q, want a once", got)
	}
}

func TestShutDownReleasesBlockedWorkers(t *testing.T) {
	q, _ := newQueue()
	const workers = 3
	results := make(chan bool)
	for range workers {
		go func() {
			_, shutdown := q.Get()
			results <- shutdown
		}()
	}
	q.ShutDown()
	for i := range workers {
		select {
		case shutdown := <-results:
			if !shutdown {
				t.Errorf("worker %d: Get returned an item from an empty queue", i)
			}
		case <-time.After(wait):
			t.Fatalf("worker %d still blocked in Get %v after ShutDown", i, wait)
		}
	}
}

func TestShutDownDrainsWaitingItemsThenDropsNewOnes(t *testing.T) {
	q, clk := newQueue()
	q.Add("a")
	q.AddAfter("late", time.Second)
	q.ShutDown()
	q.Add("b")
	clk.Step(time.Second) // "late" fires into a shut-down queue

	item, shutdown := q.Get()
	if shutdown || item != "a" {
		t.Fatalf("Get = (%q, %v), want the item queued before ShutDown", item, shutdown)
	}
	q.Done(item)
	if item, shutdown := q.Get(); !shutdown {
		t.Fatalf("Get = (%q, false), want shutdown: items added after ShutDown are dropped", item)
	}
}
