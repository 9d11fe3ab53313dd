package leaderelection

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/testserver"
)

// t0 is where every fake clock starts.
var t0 = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

// newCandidate is a candidate for kube-system/name with Kubernetes'
// default durations, on clk.
func newCandidate(t *testing.T, c *client.Client, name, identity string, clk *clocktesting.FakeClock) *Elector {
	t.Helper()
	e, err := New(Config{Client: c, Namespace: metav1.NamespaceSystem, Name: name, Identity: identity, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func getLease(t *testing.T, c *client.Client, name string) *coordinationv1.Lease {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := c.Get(context.Background(), client.Leases, metav1.NamespaceSystem, name, l); err != nil {
		t.Fatal(err)
	}
	return l
}

// heldBy is a Lease spec as another candidate wrote it at renewed.
func heldBy(holder string, seconds, transitions int32, renewed time.Time) *coordinationv1.LeaseSpec {
	t := metav1.NewMicroTime(renewed)
	return &coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(seconds),
		AcquireTime: &t, RenewTime: &t, LeaseTransitions: ptr.To(transitions)}
}

// renewAs rewrites the Lease's renewTime as its holder does.
func renewAs(t *testing.T, c *client.Client, name string, at time.Time) {
	t.Helper()
	l := getLease(t, c, name)
	l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(at))
	if err := c.Update(context.Background(), client.Leases, metav1.NamespaceSystem, name, l, nil); err != nil {
		t.Fatal(err)
	}
}

func (o outcome) String() string {
	return [...]string{failed: "failed", heldByOther: "held by another", ours: "ours"}[o]
}

// TestTry runs a candidate's tries against a real API server, on a fake
// clock, from the Lease's state before: who may take it, and when.
func TestTry(t *testing.T) {
	srv := testserver.StartServer(t)
	c := client.New(srv.URL, "leaderelection-test")
	// One try: first move the clock by after; if holderRenews, the
	// other holder renews its Lease before the try.
	type try struct {
		after        time.Duration
		holderRenews bool
		want         outcome
	}
	tests := []struct {
		name   string
		before *coordinationv1.LeaseSpec // nil: no Lease
		tries  []try
		// What the Lease says after the last try.
		wantHolder      string
		wantTransitions int32
		wantAcquired    time.Duration // acquireTime - t0
	}{
		{name: "with no Lease yet, the first try creates it and leads, with no transitions",
			tries:      []try{{want: ours}},
			wantHolder: "me", wantTransitions: 0, wantAcquired: 0},
		{name: "a released Lease (holderIdentity \"\") is taken at the first try, one more transition",
			before:     heldBy("", 1, 4, t0.Add(-time.Second)),
			tries:      []try{{want: ours}},
			wantHolder: "me", wantTransitions: 5, wantAcquired: 0},
		{name: "a Lease renewed an hour ago is not taken at first sight: a candidate counts on its own clock from when it saw it",
			before:     heldBy("other", 15, 0, t0.Add(-time.Hour)),
			tries:      []try{{want: heldByOther}},
			wantHolder: "other", wantTransitions: 0, wantAcquired: -time.Hour},
		{name: "one nanosecond short of the lease duration since the candidate saw it, it is still the holder's",
			before:     heldBy("other", 15, 0, t0),
			tries:      []try{{want: heldByOther}, {after: 15*time.Second - 1, want: heldByOther}},
			wantHolder: "other", wantTransitions: 0, wantAcquired: 0},
		{name: "seen unchanged for the whole lease duration, it is taken over: acquired now, one more transition",
			before:     heldBy("other", 15, 2, t0),
			tries:      []try{{want: heldByOther}, {after: 15 * time.Second, want: ours}},
			wantHolder: "me", wantTransitions: 3, wantAcquired: 15 * time.Second},
		{name: "a Lease its holder keeps renewing stays the holder's however long the candidate waits",
			before: heldBy("other", 15, 0, t0),
			tries: []try{{want: heldByOther}, {after: 10 * time.Second, holderRenews: true, want: heldByOther},
				{after: 10 * time.Second, holderRenews: true, want: heldByOther}, {after: 14 * time.Second, want: heldByOther}},
			wantHolder: "other", wantTransitions: 0, wantAcquired: 0},
		{name: "the holder's leaseDurationSeconds is what a candidate waits, not its own",
			before:     heldBy("other", 30, 0, t0),
			tries:      []try{{want: heldByOther}, {after: 15 * time.Second, want: heldByOther}, {after: 15 * time.Second, want: ours}},
			wantHolder: "me", wantTransitions: 1, wantAcquired: 30 * time.Second},
		{name: "a Lease held by this candidate is renewed, keeping its acquireTime and transitions",
			before:     heldBy("me", 15, 7, t0),
			tries:      []try{{after: 3 * time.Second, want: ours}},
			wantHolder: "me", wantTransitions: 7, wantAcquired: 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("lease-%d", i)
			if tt.before != nil {
				l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem}, Spec: *tt.before}
				if err := c.Create(context.Background(), client.Leases, metav1.NamespaceSystem, l, nil); err != nil {
					t.Fatal(err)
				}
			}
			clk := clocktesting.NewFakeClock(t0)
			e := newCandidate(t, c, name, "me", clk)
			for j, tr := range tt.tries {
				clk.Step(tr.after)
				if tr.holderRenews {
					renewAs(t, c, name, clk.Now())
				}
				if got := e.try(context.Background()); got != tr.want {
					t.Fatalf("try %d (at t0+%v): %v, want %v", j+1, clk.Since(t0), got, tr.want)
				}
			}
			l := getLease(t, c, name)
			if got := holderOf(l); got != tt.wantHolder {
				t.Errorf("holderIdentity %q, want %q", got, tt.wantHolder)
			}
			if got := ptr.Deref(l.Spec.LeaseTransitions, -1); got != tt.wantTransitions {
				t.Errorf("leaseTransitions %d, want %d", got, tt.wantTransitions)
			}
			if got := l.Spec.AcquireTime.Sub(t0); got != tt.wantAcquired {
				t.Errorf("acquireTime t0%+v, want t0%+v", got, tt.wantAcquired)
			}
			if tt.wantHolder == "me" && !l.Spec.RenewTime.Time.Equal(clk.Now()) {
				t.Errorf("renewTime %v, want the last try's %v", l.Spec.RenewTime, clk.Now())
			}
		})
	}
}

// TestTryTwoCandidatesAtOnce: of two candidates that find the same free
// Lease, or none, one leads; the other's write names a version that is
// gone and the API server refuses it.
func TestTryTwoCandidatesAtOnce(t *testing.T) {
	srv := testserver.StartServer(t)
	c := client.New(srv.URL, "leaderelection-test")
	for _, before := range []*coordinationv1.LeaseSpec{nil, heldBy("", 1, 0, t0)} {
		name := "race-none"
		if before != nil {
			name = "race-released"
		}
		t.Run(name, func(t *testing.T) {
			for round := range 20 {
				name := fmt.Sprintf("%s-%d", name, round)
				if before != nil {
					l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem}, Spec: *before}
					if err := c.Create(context.Background(), client.Leases, metav1.NamespaceSystem, l, nil); err != nil {
						t.Fatal(err)
					}
				}
				a := newCandidate(t, c, name, "a", clocktesting.NewFakeClock(t0))
				b := newCandidate(t, c, name, "b", clocktesting.NewFakeClock(t0))
				results := make(chan outcome, 2)
				go func() { results <- a.try(context.Background()) }()
				go func() { results <- b.try(context.Background()) }()
				r1, r2 := <-results, <-results
				if (r1 == ours) == (r2 == ours) {
					t.Fatalf("round %d: the tries gave %v and %v, want exactly one ours", round, r1, r2)
				}
			}
		})
	}
}
