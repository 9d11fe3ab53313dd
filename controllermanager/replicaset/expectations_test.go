package replicaset

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
		do   func(e *expectations, clk *clocktesting.FakePassiveClock)
		want bool // satisfied(rs)
	}{
		{
			name: "a ReplicaSet with no expectations can trust the cache",
			do:   func(e *expectations, _ *clocktesting.FakePassiveClock) {},
			want: true,
		},
		{
			name: "creations in flight are not satisfied until every one is observed",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.expectCreations(rs, 3)
				e.creationObserved(rs)
				e.creationObserved(rs)
			},
			want: false,
		},
		{
			name: "creations are satisfied once all of them are observed",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.expectCreations(rs, 3)
				for range 3 {
					e.creationObserved(rs)
				}
			},
			want: true,
		},
		{
			name: "observing more creations than expected stays satisfied",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.expectCreations(rs, 1)
				e.creationObserved(rs)
				e.creationObserved(rs)
			},
			want: true,
		},
		{
			name: "creations observed for another ReplicaSet do not count",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.expectCreations(rs, 1)
				e.creationObserved(other)
			},
			want: false,
		},
		{
			name: "creations observed before they were expected do not count",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.creationObserved(rs)
				e.expectCreations(rs, 1)
			},
			want: false,
		},
		{
			name: "deletions are satisfied once each expected pod's deletion is observed",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.expectDeletions(rs, []string{"default/web-a", "default/web-b"})
				e.deletionObserved(rs, "default/web-b")
				e.deletionObserved(rs, "default/web-a")
			},
			want: true,
		},
		{
			name: "a late deletion event for another pod does not satisfy a deletion expectation",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.expectDeletions(rs, []string{"default/web-a", "default/web-b"})
				e.deletionObserved(rs, "default/web-a")
				e.deletionObserved(rs, "default/web-old") // deleted by an earlier sync
			},
			want: false,
		},
		{
			name: "the same deletion observed twice counts once",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.expectDeletions(rs, []string{"default/web-a", "default/web-b"})
				e.deletionObserved(rs, "default/web-a")
				e.deletionObserved(rs, "default/web-a")
			},
			want: false,
		},
		{
			name: "a new expectation replaces the old one",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.expectCreations(rs, 5)
				e.expectDeletions(rs, []string{"default/web-a"})
				e.deletionObserved(rs, "default/web-a")
			},
			want: true,
		},
		{
			name: "outstanding expectations still hold at exactly five minutes",
			do: func(e *expectations, clk *clocktesting.FakePassiveClock) {
				e.expectCreations(rs, 3)
				clk.SetTime(clk.Now().Add(5 * time.Minute))
			},
			want: false,
		},
		{
			name: "outstanding expectations expire after five minutes, so a lost event cannot wedge the ReplicaSet",
			do: func(e *expectations, clk *clocktesting.FakePassiveClock) {
				e.expectDeletions(rs, []string{"default/web-a"})
				clk.SetTime(clk.Now().Add(5*time.Minute + time.Nanosecond))
			},
			want: true,
		},
		{
			name: "forget drops the expectations of a deleted ReplicaSet",
			do: func(e *expectations, _ *clocktesting.FakePassiveClock) {
				e.expectCreations(rs, 3)
				e.forget(rs)
			},
			want: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			e := newExpectations(clk)
			tt.do(e, clk)
			if got := e.satisfied(rs); got != tt.want {
				t.Errorf("satisfied = %v, want %v", got, tt.want)
			}
		})
	}
}
