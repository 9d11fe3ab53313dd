package backoff

import (
	"testing"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"
)

// The back-off gives the delays of client-go's flowcontrol.Backoff, the
// kubelet's, for the same sequence of crashes: each container runs for
// `ran` and is then asked about after `after`.
func TestBackOffMatchesClientGo(t *testing.T) {
	type crash struct{ ran, after time.Duration }
	for _, tc := range []struct {
		name    string
		crashes []crash
	}{
		{"crashing at once doubles the delay up to the cap", []crash{{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}}},
		{"a wait shorter than the delay is still in back-off", []crash{{0, 0}, {time.Second, 3 * time.Second}, {0, 5 * time.Second}}},
		{"ten minutes of running resets it", []crash{{0, 0}, {0, 0}, {0, 0}, {11 * time.Minute, 0}, {0, 0}}},
		{"nine minutes do not", []crash{{0, 0}, {0, 0}, {0, 0}, {9 * time.Minute, 0}, {0, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
			ours := New(DefaultInitial, DefaultMax, clk)
			theirs := flowcontrol.NewFakeBackOff(DefaultInitial, DefaultMax, clk)
			for i, c := range tc.crashes {
				clk.Step(c.ran)
				finished := clk.Now()
				clk.Step(c.after)
				remaining, delay := ours.Wait("k", finished)
				in := theirs.IsInBackOffSince("k", finished)
				if (remaining > 0) != in || (in && delay != theirs.Get("k")) {
					t.Fatalf("crash %d: ours waits %v more of %v; client-go in back-off %v of %v", i, remaining, delay, in, theirs.Get("k"))
				}
				if in {
					clk.Step(remaining) // the kubelet restarts it when the wait is over
				}
				ours.Next("k", clk.Now())
				theirs.Next("k", clk.Now())
				if ours.entries["k"].delay != theirs.Get("k") {
					t.Fatalf("crash %d: delay %v, client-go %v", i, ours.entries["k"].delay, theirs.Get("k"))
				}
			}
		})
	}
}
