package stats

import (
	"sync"
	"time"
)

// The CRI reports cumulative CPU; the Summary API's usageNanoCores is a
// rate, which the kubelet computes between its own samples (upstream's
// cri_stats_provider keeps the previous one per container). Throttling is
// estimated between the same samples, since the CRI has no field for it.

// minRateInterval is the shortest interval a rate is computed over:
// scrapes closer together (the summary and /metrics/resource read in the
// same second) reuse the last rate rather than divide noise by nothing.
const minRateInterval = time.Second

// busyFraction is how close to its quota a container's usage must come
// for its periods to count as throttled.
const busyFraction = 0.95

// sample is a container's last reading and what was derived from it.
type sample struct {
	at         time.Time
	coreNanos  uint64
	nanoCores  uint64
	throttling Throttling
}

// rates keeps the last sample of each container (or pod, or node), by ID.
type rates struct {
	mu   sync.Mutex
	last map[string]sample
}

func newRates() *rates { return &rates{last: map[string]sample{}} }

// observe records a reading of id's cumulative CPU at at and returns its
// rate in nanocores and, with a CFS quota (µs per period), its throttling
// so far: a container using at least busyFraction of its quota in an
// interval hit the quota in each of its periods, throttled for the rest
// of each period (what a single busy thread is).
func (r *rates) observe(id string, at time.Time, coreNanos uint64, quota, period int64) (uint64, Throttling) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, ok := r.last[id]
	if !ok || coreNanos < prev.coreNanos || at.Before(prev.at) { // first sample, or a new instance
		r.last[id] = sample{at: at, coreNanos: coreNanos}
		return 0, Throttling{}
	}
	dt := at.Sub(prev.at)
	if dt < minRateInterval {
		return prev.nanoCores, prev.throttling
	}
	next := sample{at: at, coreNanos: coreNanos, throttling: prev.throttling}
	next.nanoCores = uint64(float64(coreNanos-prev.coreNanos) / dt.Seconds())
	if quota > 0 && period > 0 {
		periodDur := time.Duration(period) * time.Microsecond
		periods := uint64(dt / periodDur)
		next.throttling.Periods += periods
		quotaNanoCores := float64(quota) / float64(period) * 1e9
		if float64(next.nanoCores) >= busyFraction*quotaNanoCores {
			next.throttling.ThrottledPeriods += periods
			if quota < period {
				next.throttling.ThrottledSeconds += float64(periods) * float64(period-quota) / 1e6
			}
		}
	}
	r.last[id] = next
	return next.nanoCores, next.throttling
}

// keep forgets every ID not in seen: containers that are gone.
func (r *rates) keep(seen map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.last {
		if !seen[id] {
			delete(r.last, id)
		}
	}
}
