package controller

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestExpectations(t *testing.T) {
	const rs, other = "default/web", "default/api"
	tests := []struct {
		name string
		// do records and observes; clk is the expectations' clock.
		do   func(e *Expectations, clk *clocktesting.FakePassiveClock)
		want bool // satisfied(rs)
	}{
		{
			name: "a ReplicaSet with no expectations can trust the cache",
			do:   func(e *Expectations, _ *clocktesting.FakePassiveClock) {},
			want: true,
		},
		{
			name: "creations in flight are not satisfied until every one is observed",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.ExpectCreations(rs, 3)
				e.CreationObserved(rs)
				e.CreationObserved(rs)
			},
			want: false,
		},
		{
			name: "creations are satisfied once all of them are observed",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.ExpectCreations(rs, 3)
				for range 3 {
					e.CreationObserved(rs)
				}
			},
			want: true,
		},
		{
			name: "observing more creations than expected stays satisfied",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.ExpectCreations(rs, 1)
				e.CreationObserved(rs)
				e.CreationObserved(rs)
			},
			want: true,
		},
		{
			name: "creations observed for another ReplicaSet do not count",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.ExpectCreations(rs, 1)
				e.CreationObserved(other)
			},
			want: false,
		},
		{
			name: "creations observed before they were expected do not count",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.CreationObserved(rs)
				e.ExpectCreations(rs, 1)
			},
			want: false,
		},
		{
			name: "deletions are satisfied once each expected pod's deletion is observed",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.ExpectDeletions(rs, []string{"default/web-a", "default/web-b"})
				e.DeletionObserved(rs, "default/web-b")
				e.DeletionObserved(rs, "default/web-a")
			},
			want: true,
		},
		{
			name: "a late deletion event for another pod does not satisfy a deletion expectation",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.ExpectDeletions(rs, []string{"default/web-a", "default/web-b"})
				e.DeletionObserved(rs, "default/web-a")
				e.DeletionObserved(rs, "default/web-old") // deleted by an earlier sync
			},
			want: false,
		},
		{
			name: "the same deletion observed twice counts once",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.ExpectDeletions(rs, []string{"default/web-a", "default/web-b"})
				e.DeletionObserved(rs, "default/web-a")
				e.DeletionObserved(rs, "default/web-a")
			},
			want: false,
		},
		{
			name: "a new expectation replaces the old one",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.ExpectCreations(rs, 5)
				e.ExpectDeletions(rs, []string{"default/web-a"})
				e.DeletionObserved(rs, "default/web-a")
			},
			want: true,
		},
		{
			name: "outstanding expectations still hold at exactly five minutes",
			do: func(e *Expectations, clk *clocktesting.FakePassiveClock) {
				e.ExpectCreations(rs, 3)
				clk.SetTime(clk.Now().Add(5 * time.Minute))
			},
			want: false,
		},
		{
			name: "outstanding expectations expire after five minutes, so a lost event cannot wedge the ReplicaSet",
			do: func(e *Expectations, clk *clocktesting.FakePassiveClock) {
				e.ExpectDeletions(rs, []string{"default/web-a"})
				clk.SetTime(clk.Now().Add(5*time.Minute + time.Nanosecond))
			},
			want: true,
		},
		{
			name: "forget drops the expectations of a deleted ReplicaSet",
			do: func(e *Expectations, _ *clocktesting.FakePassiveClock) {
				e.ExpectCreations(rs, 3)
				e.Forget(rs)
			},
			want: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			e := NewExpectations(clk)
			tt.do(e, clk)
			if got := e.Satisfied(rs); got != tt.want {
				t.Errorf("satisfied = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestExpectationsWaitForTheirEventsOrFiveMinutes(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	e := NewExpectations(clk)
	const ds = "default/agent" // a DaemonSet: two creations and a deletion at once
	if !e.Satisfied(ds) {
		t.Fatal("nothing expected, yet not satisfied")
	}
	e.Expect(ds, 2, []string{"default/old"})
	for _, step := range []struct {
		name string
		do   func()
		want bool
	}{
		{"one of two creations seen", func() { e.CreationObserved(ds) }, false},
		{"both seen, the deletion not yet", func() { e.CreationObserved(ds) }, false},
		{"another pod's deletion does not count", func() { e.DeletionObserved(ds, "default/other") }, false},
		{"the deletion seen", func() { e.DeletionObserved(ds, "default/old") }, true},
		{"seen twice (graceful deletion) is harmless", func() { e.DeletionObserved(ds, "default/old") }, true},
	} {
		step.do()
		if got := e.Satisfied(ds); got != step.want {
			t.Fatalf("%s: satisfied = %v, want %v", step.name, got, step.want)
		}
	}
	e.Expect(ds, 1, nil)
	clk.Step(ExpectationsTTL + time.Second)
	if !e.Satisfied(ds) {
		t.Error("a lost event blocks the owner beyond the 5 minute TTL")
	}
}
