package preemption

import (
	"math"

	"github.com/mkube/mkube/scheduler/framework"
)

// pickOneNode chooses the candidate where preemption hurts least
// (Kubernetes' pickOneNodeForPreemption). Each rule below scores every
// candidate still in the running; only those with the best score go on to
// the next rule:
//
//  1. the fewest PodDisruptionBudget violations;
//  2. the lowest priority of its most important victim;
//  3. the smallest sum of the victims' priorities (each counted from
//     math.MinInt32, so that more victims never sum to less, even with
//     negative priorities);
//  4. the fewest victims;
//  5. the latest start time of its most important victims (the earliest
//     start among the victims of the highest priority): the work lost is
//     the most recent;
//  6. the first candidate, in the order of the dry run.
//
// Example: node01's victims have priorities [5, 0], node02's [5], node03's
// [3, 3, 3]. Rule 2: node03 (3 < 5). Without node03, rule 2 ties node01
// and node02 at 5, and rule 3 picks node02 (5 < 5 + 0: every victim counts
// MaxInt32+1 on top of its priority).
//
// Victims are sorted most important first (SelectVictimsOnNode).
func pickOneNode(candidates []*framework.Candidate) *framework.Candidate {
	rules := []func(c *framework.Candidate) int64{
		func(c *framework.Candidate) int64 { return -int64(c.NumPDBViolations) },
		func(c *framework.Candidate) int64 { return -int64(framework.PodPriority(c.Victims[0])) },
		func(c *framework.Candidate) int64 {
			var sum int64
			for _, v := range c.Victims {
				sum += int64(framework.PodPriority(v)) + int64(math.MaxInt32) + 1
			}
			return -sum
		},
		func(c *framework.Candidate) int64 { return -int64(len(c.Victims)) },
		earliestStartOfMostImportant,
	}
	for _, score := range rules {
		if len(candidates) == 1 {
			break
		}
		var best []*framework.Candidate
		bestScore := int64(math.MinInt64)
		for _, c := range candidates {
			switch s := score(c); {
			case s > bestScore:
				best, bestScore = append(best[:0], c), s
			case s == bestScore:
				best = append(best, c)
			}
		}
		candidates = best
	}
	return candidates[0]
}

// earliestStartOfMostImportant is the earliest start time among the
// victims of the highest priority (Kubernetes' GetEarliestPodStartTime):
// the bigger, the better.
func earliestStartOfMostImportant(c *framework.Candidate) int64 {
	top := framework.PodPriority(c.Victims[0])
	earliest := int64(math.MaxInt64)
	for _, v := range c.Victims {
		if framework.PodPriority(v) == top {
			earliest = min(earliest, startTime(v))
		}
	}
	return earliest
}
