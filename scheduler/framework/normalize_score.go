package framework

// DefaultNormalizeScore scales raw scores so the highest becomes
// MaxNodeScore (Kubernetes' helper.DefaultNormalizeScore):
//
//	score = MaxNodeScore × raw / max(raw)             (reverse = false)
//	score = MaxNodeScore - MaxNodeScore × raw / max(raw) (reverse = true)
//
// reverse is for counts of something bad: the node with the most scores 0,
// a node with none scores MaxNodeScore. When every raw score is 0, all
// nodes get 0 (or MaxNodeScore if reverse).
//
// Example, reverse, raw intolerable-taint counts node01 2, node02 1,
// node03 0 → 0, 50, 100.
func DefaultNormalizeScore(reverse bool, scores []NodeScore) {
	var maxCount int64
	for i := range scores {
		maxCount = max(maxCount, scores[i].Score)
	}
	for i := range scores {
		var s int64
		if maxCount > 0 {
			s = MaxNodeScore * scores[i].Score / maxCount
		}
		if reverse {
			s = MaxNodeScore - s
		}
		scores[i].Score = s
	}
}
