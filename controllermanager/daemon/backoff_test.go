package daemon

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestFailedPodBackoffDoublesUpToFifteenMinutesAndForgetsAfterAPeace(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	b := newBackoff(clk)
	const key = "uid/1/node01"
	if in, _ := b.inBackoff(key); in {
		t.Fatal("a first failure is in back-off")
	}
	steps := []struct {
		name      string
		wait      time.Duration // after the previous deletion
		wantIn    bool
		wantDelay time.Duration // the delay once this step acted (or not)
	}{
		{"the first deletion starts a 1s back-off", 0, false, time.Second},
		{"half a second later it still holds", 500 * time.Millisecond, true, time.Second},
		{"after a second the next deletion doubles it", time.Second, false, 2 * time.Second},
		{"then 4s", 2 * time.Second, false, 4 * time.Second},
	}
	for _, s := range steps {
		clk.Step(s.wait)
		in, _ := b.inBackoff(key)
		if in != s.wantIn {
			t.Fatalf("%s: in back-off = %v, want %v", s.name, in, s.wantIn)
		}
		if !in {
			b.next(key)
		}
		if _, d := b.inBackoff(key); d != s.wantDelay {
			t.Fatalf("%s: delay %v, want %v", s.name, d, s.wantDelay)
		}
	}
	for range 20 {
		clk.Step(failedPodsBackoffMax)
		b.next(key)
	}
	if _, d := b.inBackoff(key); d != failedPodsBackoffMax {
		t.Errorf("delay %v after many failures, want the 15m cap", d)
	}
	clk.Step(2*failedPodsBackoffMax + time.Second)
	if in, _ := b.inBackoff(key); in {
		t.Error("still in back-off after twice the maximum in peace")
	}
	b.next(key)
	if _, d := b.inBackoff(key); d != time.Second {
		t.Errorf("after a long peace the delay is %v, want 1s again", d)
	}
}
