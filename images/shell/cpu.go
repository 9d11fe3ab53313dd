package shell

import (
	"context"
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// CPU is what a container's cgroup counts of its processor time, as the
// kernel's cpu controller does on a cgroup v2 node (cpu.stat): the CPU
// time its processes used, and how often its CFS quota (cpu.max, from
// the container's cpu limit) held them back.
//
// Nothing here burns the host's processor. A simulated program says how
// much CPU it wants and for how long, on the process's clock: a shell
// loop that never blocks wants one core (Process.pace), `yes` or stress
// --cpu N want one core per worker, a request to a server costs the
// CPU time its real handler spends. CPU integrates that demand over the
// clock's time, capped at the quota, so a busy loop accrues one
// CPU-second per second of the clock (half that under a 500m limit)
// whatever the test machine does, and a test with a fake clock sees
// exact numbers. An idle container still accrues a few microcores (its
// runtime's and kernel's housekeeping), never exactly 0: metrics-server
// drops a pod whose cumulative CPU is 0.
type CPU struct {
	clock clock.PassiveClock

	mu               sync.Mutex
	epoch            time.Time // CFS periods are counted from here
	last             time.Time // usage is accounted up to here
	demand           float64   // cores wanted now, by every worker together
	quota            float64   // cores the quota allows; 0 is no limit
	period           time.Duration
	usage            time.Duration
	periods          int64 // CFS periods in which something wanted to run
	throttledPeriods int64 // those in which the quota ran out
	throttledTime    time.Duration
	stopped          bool // the cgroup's processes are gone: nothing more accrues
}

// idleCores is what an idle container uses: 5 microcores.
const idleCores = 5e-6

// cfsPeriod is the kernel's default CFS period, the kubelet's too.
const cfsPeriod = 100 * time.Millisecond

// NewCPU starts counting on clk from now.
func NewCPU(clk clock.PassiveClock) *CPU {
	if clk == nil {
		clk = clock.RealClock{}
	}
	now := clk.Now()
	return &CPU{clock: clk, epoch: now, last: now, period: cfsPeriod}
}

// SetLimit sets the CFS quota and period, in microseconds as CRI's
// LinuxContainerResources gives them (cpu_quota, cpu_period): a quota
// of 50000 per 100000 is a 500m limit; a quota of 0 or less is none.
func (c *CPU) SetLimit(quotaMicros, periodMicros int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance()
	period := time.Duration(periodMicros) * time.Microsecond
	if period <= 0 {
		period = cfsPeriod
	}
	c.period, c.quota = period, 0
	if quotaMicros > 0 {
		c.quota = float64(time.Duration(quotaMicros)*time.Microsecond) / float64(period)
	}
}

// Limit is the quota in cores, 0 for none.
func (c *CPU) Limit() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.quota
}

// Demand is the cores the processes want now, before the quota.
func (c *CPU) Demand() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.demand
}

// Use has a worker want millicores of CPU until release is called (one
// busy thread wants 1000).
func (c *CPU) Use(millicores int64) (release func()) {
	c.add(float64(millicores) / 1000)
	var once sync.Once
	return func() { once.Do(func() { c.add(-float64(millicores) / 1000) }) }
}

func (c *CPU) add(cores float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance()
	c.demand = max(c.demand+cores, 0)
}

// Charge adds CPU time spent at once: a short request's handling, too
// brief to be held back by the quota.
func (c *CPU) Charge(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance()
	c.usage += d
}

// Stop ends the accounting: the container's processes are gone, and
// its counters stay as they were.
func (c *CPU) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance()
	c.stopped = true
}

// CPUStat is cpu.stat's CPU part.
type CPUStat struct {
	Usage         time.Duration // usage_usec: the CPU time used
	Periods       int64         // nr_periods: CFS periods with work to run
	Throttled     int64         // nr_throttled: periods the quota ran out in
	ThrottledTime time.Duration // throttled_usec: how long work waited for the next period
}

// Stat is the counters now.
func (c *CPU) Stat() CPUStat {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance()
	return CPUStat{Usage: c.usage, Periods: c.periods, Throttled: c.throttledPeriods, ThrottledTime: c.throttledTime}
}

// advance accounts the time since last at the current demand: what it
// got (capped by the quota) is usage; every CFS period boundary crossed
// with work to run is a period, a throttled one if the work wanted more
// than the quota, and the work waited for the rest of each throttled
// period (for one thread at 1 core under 500m: 50 ms of every 100 ms).
// Callers hold c.mu.
func (c *CPU) advance() {
	now := c.clock.Now()
	dt := now.Sub(c.last)
	if dt <= 0 {
		return
	}
	if c.stopped {
		c.last = now
		return
	}
	granted := c.demand
	if c.quota > 0 {
		granted = min(granted, c.quota)
	}
	c.usage += time.Duration(math.Round((granted + idleCores) * float64(dt)))
	if c.demand > 0 && c.quota > 0 {
		n := int64(now.Sub(c.epoch)/c.period) - int64(c.last.Sub(c.epoch)/c.period)
		c.periods += n
		if c.demand > c.quota {
			c.throttledPeriods += n
			c.throttledTime += time.Duration(math.Round(float64(n) * float64(c.period) * (1 - c.quota/c.demand)))
		}
	}
	c.last = now
}

// Compute spends work of CPU time on one thread, as a request's handler
// does, and returns when it is done on clk: at one core, or at the
// quota if that is less. Under contention it finishes as early as
// alone (the quota still caps what the cgroup is charged).
func (c *CPU) Compute(ctx context.Context, clk clock.Clock, work time.Duration) error {
	speed := 1.0
	if q := c.Limit(); q > 0 && q < 1 {
		speed = q
	}
	release := c.Use(1000)
	defer release()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clk.After(time.Duration(float64(work) / speed)):
		return nil
	}
}

// pace lets time pass in a loop that never sleeps, so that `while true; do
// echo x; done` floods the log at a bounded rate instead of taking the
// host's CPU: after every 1000 commands it waits a millisecond of the
// clock. A script that ran 1000 commands without blocking is a busy
// loop, and from then until it blocks (sleep, tail -f) or ends it is
// accounted one core of its cgroup, the waits included: the loop is
// accounted, not run at full speed, and its later waits are longer
// (busyLoopPace), so that it costs the host a percent or two of a core
// while it shows a full one. It is also where a killed process notices.
func (p *Process) pace(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if p.steps++; p.steps < 1000 {
		return nil
	}
	p.steps = 0
	wait := time.Millisecond
	if p.spinning == nil {
		p.spinning = p.cpu.Use(1000)
	} else {
		wait = busyLoopPace
	}
	return p.wait(ctx, wait)
}

// busyLoopPace is the wait per 1000 commands of a known busy loop:
// 100,000 commands a second of the clock.
const busyLoopPace = 10 * time.Millisecond

// block is where the process stops using the CPU: it sleeps, waits, or
// ends.
func (p *Process) block() {
	if p.spinning != nil {
		p.spinning()
		p.spinning = nil
	}
}

// sleep blocks for d of the clock: the process uses no CPU meanwhile.
func (p *Process) sleep(ctx context.Context, d time.Duration) error {
	p.block()
	return p.wait(ctx, d)
}

func (p *Process) wait(ctx context.Context, d time.Duration) error {
	p.steps = 0
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.Clock.After(d):
		return nil
	}
}

// CPU is the cgroup's CPU accounting the process charges.
func (p *Process) CPU() *CPU { return p.cpu }

// Spin is a program that keeps one core busy until it is killed (`yes >
// /dev/null`, `dd if=/dev/zero of=/dev/null`, `md5sum /dev/urandom`):
// accounted, not run.
func (p *Process) Spin(ctx context.Context) error {
	release := p.cpu.Use(1000)
	defer release()
	<-ctx.Done()
	return ctx.Err()
}

// Compute spends work of CPU time on one thread before returning, as a
// server's handler does (CPU.Compute).
func (p *Process) Compute(ctx context.Context, work time.Duration) error {
	return p.cpu.Compute(ctx, p.Clock, work)
}
