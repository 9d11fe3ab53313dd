package apiregistration

import (
	"testing"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client/workqueue"
)

// Every sync of a Service-backed APIService schedules its next check;
// each replaces the one before, so events do not multiply the checks,
// and a deleted APIService is not checked again.
func TestARecheckReplacesTheOneScheduledBefore(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC))
	c := &Controller{queue: workqueue.New[string](clk), clock: clk, rechecks: map[string]clock.Timer{}}
	for range 3 { // synced at 0 s, 10 s and 20 s
		c.recheck("v1alpha1.wardle.example.com", recheckPassed)
		clk.Step(10 * time.Second)
	}
	if n := c.queue.Len(); n != 0 {
		t.Fatalf("at 30 s, %d checks queued: the check scheduled at 0 s was not replaced", n)
	}
	clk.Step(20 * time.Second)
	if n := c.queue.Len(); n != 1 {
		t.Fatalf("at 50 s, 30 s after the last sync, %d checks queued, want 1", n)
	}
	c.recheck("v1alpha1.wardle.example.com", recheckFailed)
	c.recheck("v1alpha1.wardle.example.com", 0) // deleted
	clk.Step(time.Minute)
	if n := c.queue.Len(); n != 1 {
		t.Errorf("a deleted APIService was checked again: %d queued", n)
	}
}
