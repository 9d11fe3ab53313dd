package podtopologyspread

import (
	"maps"
	"testing"
)

// FuzzDomainCounts changes the counts of four domains one pod at a time,
// as preemption does, and checks the minimum against a scan of every
// domain after each change. Each byte is a change: its low two bits pick
// the domain, bit 2 adds (set) or removes a pod; removals from an empty
// domain are skipped (no pod to remove).
func FuzzDomainCounts(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{4, 4, 5, 6, 7, 0, 0, 1})             // raise every domain, then lower the first
	f.Add([]byte{4, 5, 6, 7, 4, 5, 6, 7, 4, 1, 2, 3}) // the last domain at the minimum rises
	f.Fuzz(func(t *testing.T, changes []byte) {
		d := domainCounts{pods: map[string]int{"a": 0, "b": 2, "c": 1}}
		d.tally()
		names := []string{"a", "b", "c", "d"} // d is unknown to PreFilter until it is added to
		for _, c := range changes {
			name, delta := names[c&3], -1
			if c&4 != 0 {
				delta = 1
			}
			if delta < 0 && d.pods[name] == 0 {
				continue
			}
			d.move(name, delta)
			want := -1
			for _, n := range d.pods {
				if want < 0 || n < want {
					want = n
				}
			}
			if d.min != want {
				t.Fatalf("after %+d to %s: min %d, want %d (counts %v)", delta, name, d.min, want, d.pods)
			}
			histogram := map[int]int{}
			for _, n := range d.pods {
				histogram[n]++
			}
			if !maps.Equal(histogram, d.domainsWith) {
				t.Fatalf("after %+d to %s: histogram %v, want %v", delta, name, d.domainsWith, histogram)
			}
		}
	})
}

func TestGlobalMinIsZeroBelowMinDomains(t *testing.T) {
	d := domainCounts{pods: map[string]int{"a": 2, "b": 3}}
	d.tally()
	for _, tt := range []struct {
		minDomains int32
		want       int
	}{{1, 2}, {2, 2}, {3, 0}} {
		if got := d.globalMin(tt.minDomains); got != tt.want {
			t.Errorf("two domains at 2 and 3, minDomains %d: global minimum %d, want %d", tt.minDomains, got, tt.want)
		}
	}
}
