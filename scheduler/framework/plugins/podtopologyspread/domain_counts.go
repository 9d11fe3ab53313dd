package podtopologyspread

// domainCounts are one constraint's matching pods per domain (topology
// value) of the nodes PreFilter took in, 0 included, and the smallest of
// them, the global minimum of the skew.
//
// Filter reads the minimum for every node, and preemption changes the
// counts pod by pod (AddPod, RemovePod) on clones, so it is kept exact in
// O(1) per change with a histogram, domainsWith[n] = how many domains
// have n pods:
//
//	a count falls below min          → it is the new min
//	the last domain at min rises by 1 → min + 1 (that domain has it now)
//
// Kubernetes keeps only the two smallest domains (its criticalPaths),
// which relies on preemption changing one node at a time; the histogram
// needs no such argument.
type domainCounts struct {
	pods        map[string]int
	domainsWith map[int]int
	min         int // 0 while there is no domain
}

// tally builds the histogram and the minimum once PreFilter has counted.
func (d *domainCounts) tally() {
	d.domainsWith = make(map[int]int)
	d.min = 0
	first := true
	for _, n := range d.pods {
		d.domainsWith[n]++
		if first || n < d.min {
			d.min, first = n, false
		}
	}
}

// move changes the count of domain value by delta, +1 or -1. A domain
// PreFilter did not see is added.
func (d *domainCounts) move(value string, delta int) {
	old, known := d.pods[value]
	if known {
		if d.domainsWith[old]--; d.domainsWith[old] == 0 {
			delete(d.domainsWith, old)
		}
	}
	n := old + delta
	d.pods[value] = n
	d.domainsWith[n]++
	switch {
	case len(d.pods) == 1 || n < d.min:
		d.min = n
	case known && old == d.min && d.domainsWith[old] == 0:
		d.min = n
	}
}

// globalMin is the minimum the skew is measured from: 0 while fewer than
// minDomains domains exist (minDomains asks for that many domains before
// pods may pile up in the ones there are).
func (d *domainCounts) globalMin(minDomains int32) int {
	if len(d.pods) < int(minDomains) {
		return 0
	}
	return d.min
}
