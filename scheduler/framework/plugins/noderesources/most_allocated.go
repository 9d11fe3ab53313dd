package noderesources

import "github.com/mkube/mkube/scheduler/framework"

// mostRequestedScore is the MostAllocated strategy of NodeResourcesFit,
// the opposite of LeastRequestedPriority: it packs pods onto the nodes
// already most used, leaving whole nodes free (for big pods, or to be
// switched off):
//
//	score(resource) = min(requested, allocatable) × 100 / allocatable
//	score(node)     = Σ score(resource) × weight / Σ weight
//
// where requested includes the pod being scheduled. Worked example, a pod
// requesting cpu 1, memory 1Gi, on node01 (allocatable cpu 4, memory 8Gi,
// already requested cpu 1, memory 6Gi) and node02 (cpu 2, memory 4Gi,
// empty):
//
//	node01  cpu 2000m×100/4000m = 50, memory 7Gi×100/8Gi = 87 → (50+87)/2 = 68  → preferred
//	node02  cpu 1000m×100/2000m = 50, memory 1Gi×100/4Gi = 25 → (50+25)/2 = 37
func mostRequestedScore(requested, allocatable int64) int64 {
	if allocatable == 0 {
		return 0
	}
	// Pods that request nothing count the non-zero defaults, which can
	// push requested past allocatable.
	requested = min(requested, allocatable)
	return requested * framework.MaxNodeScore / allocatable
}
