package noderesources

import "github.com/mkube/mkube/scheduler/framework"

// leastRequestedScore is LeastRequestedPriority for one resource (seed:
// "通过计算CPU和Memory的使用率来决定权重，使用率越低权重越高"); Kubernetes
// calls it the LeastAllocated scoring strategy of NodeResourcesFit:
//
//	score(resource) = (allocatable - requested) × 100 / allocatable    (0 if requested > allocatable)
//	score(node)     = Σ score(resource) × weight / Σ weight             (cpu and memory, weight 1 each)
//
// where requested already includes the pod being scheduled. Integer
// division, as in Kubernetes, so scores are whole numbers from 0 to 100 and
// a node left emptier scores higher: pods spread out.
//
// Worked example, a pod requesting cpu 1, memory 1Gi:
//
//	node01: allocatable cpu 4, memory 8Gi; already requested cpu 1, memory 6Gi
//	        cpu    (4000m - 2000m) × 100 / 4000m = 50
//	        memory (8Gi - 7Gi)     × 100 / 8Gi   = 12   (12.5 rounded down)
//	        score  (50 + 12) / 2                 = 31
//	node02: allocatable cpu 2, memory 4Gi; nothing requested yet
//	        cpu    (2000m - 1000m) × 100 / 2000m = 50
//	        memory (4Gi - 1Gi)     × 100 / 4Gi   = 75
//	        score  (50 + 75) / 2                 = 62  → node02 is preferred
func leastRequestedScore(requested, allocatable int64) int64 {
	if allocatable == 0 || requested > allocatable {
		return 0
	}
	return (allocatable - requested) * framework.MaxNodeScore / allocatable
}
