package shell

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// idle is what 10 s of an idle container accrues: 5 microcores.
const idle10s = 50 * time.Microsecond

// The accounting integrates demand over the clock, capped by the quota,
// and counts CFS periods as cgroup v2's cpu.stat does.
func TestCPUAccountsDemandCappedByTheQuota(t *testing.T) {
	tests := []struct {
		name          string
		millicores    int64
		quota, period int64 // µs, as CRI gives them
		want          CPUStat
	}{
		{name: "idle: a few microcores, never 0", want: CPUStat{Usage: idle10s}},
		{name: "a busy thread: a core", millicores: 1000, want: CPUStat{Usage: 10*time.Second + idle10s}},
		{name: "a busy thread under 500m: half a core, every period throttled for 50 ms",
			millicores: 1000, quota: 50000, period: 100000,
			want: CPUStat{Usage: 5*time.Second + idle10s, Periods: 100, Throttled: 100, ThrottledTime: 5 * time.Second}},
		{name: "300m under 500m: not throttled", millicores: 300, quota: 50000, period: 100000,
			want: CPUStat{Usage: 3*time.Second + idle10s, Periods: 100}},
		{name: "two threads under 500m: each period's quota gone in 25 ms", millicores: 2000, quota: 50000, period: 100000,
			want: CPUStat{Usage: 5*time.Second + idle10s, Periods: 100, Throttled: 100, ThrottledTime: 7500 * time.Millisecond}},
		{name: "stress --cpu 2 without a limit: two cores", millicores: 2000, want: CPUStat{Usage: 20*time.Second + idle10s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(epoch)
			cpu := NewCPU(clk)
			cpu.SetLimit(tt.quota, tt.period)
			release := cpu.Use(tt.millicores)
			clk.Step(10 * time.Second)
			if got := cpu.Stat(); got != tt.want {
				t.Fatalf("after 10 s: %+v, want %+v", got, tt.want)
			}
			release()
			clk.Step(10 * time.Second)
			if got := cpu.Stat().Usage; got != tt.want.Usage+idle10s {
				t.Fatalf("10 s after the release: usage %v, want %v", got, tt.want.Usage+idle10s)
			}
			cpu.Stop()
			clk.Step(time.Hour)
			if got := cpu.Stat().Usage; got != tt.want.Usage+idle10s {
				t.Fatalf("once stopped: usage %v, want it unchanged at %v", got, tt.want.Usage+idle10s)
			}
		})
	}
}

// A request's handler (Compute) takes its CPU time at a core, or longer
// under a smaller quota, and is charged its CPU time.
func TestComputeTakesItsTimeAtTheQuota(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	cpu := NewCPU(clk)
	cpu.SetLimit(50000, 100000)
	done := make(chan error)
	go func() { done <- cpu.Compute(context.Background(), clk, 150*time.Millisecond) }()
	waitUntil(t, clk.HasWaiters)
	clk.Step(299 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("0.15 CPU-seconds at 500m ended before 0.3 s")
	default:
	}
	clk.Step(time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := cpu.Stat().Usage, 150*time.Millisecond+1500*time.Nanosecond; got != want {
		t.Fatalf("usage %v, want %v", got, want)
	}
}

// What a script does decides what it uses: a loop that never blocks and
// the endless readers and writers use a core, with the host's CPU left
// alone (they wait on the clock or on their end); a loop that sleeps
// uses almost nothing.
func TestBusyProgramsUseACore(t *testing.T) {
	tests := []struct {
		script string
		busy   bool
	}{
		{`while true; do :; done`, true},
		{`i=0; while true; do i=x; done`, true},
		{`yes > /dev/null`, true},
		{`dd if=/dev/zero of=/dev/null`, true},
		{`md5sum /dev/urandom`, true},
		{`cat /dev/urandom > /dev/null`, true},
		{`sleep 3600`, false},
		{`while true; do sleep 1; done`, false},
		{`tail -f /dev/null`, false},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(epoch)
			cpu := NewCPU(clk)
			p := New(Options{Clock: clk, CPU: cpu})
			ctx, kill := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { _, err := p.Script(ctx, tt.script); done <- err }()
			want := idle10s
			if tt.busy {
				want += 10 * time.Second
				waitUntil(t, func() bool { return cpu.Demand() == 1 })
			}
			for range 10 { // a second at a time, for the sleeping loop
				waitUntil(t, func() bool { return clk.HasWaiters() || tt.busy })
				clk.Step(time.Second)
			}
			if got := cpu.Stat().Usage; got != want {
				t.Errorf("after 10 s: usage %v, want %v", got, want)
			}
			kill()
			if err := <-done; !errors.Is(err, ErrKilled) {
				t.Fatalf("got %v, want ErrKilled", err)
			}
			clk.Step(10 * time.Second)
			if got := cpu.Stat().Usage; got != want+idle10s {
				t.Errorf("10 s after the kill: usage %v, want %v (nothing held)", got, want+idle10s)
			}
		})
	}
}

// Into a pipe an endless writer fills the pipe and ends (the real one of
// SIGPIPE once its reader is done), so a pipeline of it ends.
func TestEndlessWritersIntoAPipeEnd(t *testing.T) {
	for script, want := range map[string]string{
		"yes | head -n 3":          "y\ny\ny\n",
		"yes no | head -n 2":       "no\nno\n",
		"cat /dev/urandom | wc -c": "65536\n",
	} {
		stdout, _, code, _ := run(t, script)
		if stdout != want || code != 0 {
			t.Errorf("%s: %q, exit %d; want %q, 0", script, stdout, code, want)
		}
	}
}

// A busy loop is accounted, not run flat out: the host runs a thousand
// commands per millisecond of the clock, and sleeps in between.
func BenchmarkBusyLoopHostCost(b *testing.B) {
	p := New(Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(b.N)*time.Millisecond)
	defer cancel()
	p.Script(ctx, `while true; do :; done`)
	b.ReportMetric(float64(p.CPU().Stat().Usage)/float64(time.Duration(b.N)*time.Millisecond), "cores-accounted")
}
