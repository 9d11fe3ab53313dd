package preemption

import (
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestPickOneNode(t *testing.T) {
	at := func(hour int) time.Time { return time.Date(2025, 1, 1, hour, 0, 0, 0, time.UTC) }
	victim := func(prio int32, started int) *corev1.Pod {
		p := st.MakePod("v").Priority(prio)
		if started > 0 {
			p.StartTime(at(started))
		}
		return p.Obj()
	}
	cand := func(node string, violations int, victims ...*corev1.Pod) *framework.Candidate {
		return &framework.Candidate{Node: node, Victims: victims, NumPDBViolations: violations}
	}
	tests := []struct {
		name       string
		candidates []*framework.Candidate
		want       string
	}{
		{"1. the fewest PodDisruptionBudget violations come first, whatever the priorities",
			[]*framework.Candidate{cand("node01", 1, victim(0, 0)), cand("node02", 0, victim(900, 0), victim(800, 0))}, "node02"},
		{"2. then the lowest priority of the most important victim",
			[]*framework.Candidate{cand("node01", 0, victim(5, 0), victim(0, 0)), cand("node02", 0, victim(3, 0), victim(3, 0), victim(3, 0))}, "node02"},
		{"3. then the smallest sum of priorities: one victim of 5 beats 5 and 0",
			[]*framework.Candidate{cand("node01", 0, victim(5, 0), victim(0, 0)), cand("node02", 0, victim(5, 0))}, "node02"},
		{"3. the sum counts every victim above MinInt32, so two victims of -10 lose to one",
			[]*framework.Candidate{cand("node01", 0, victim(-10, 0), victim(-10, 0)), cand("node02", 0, victim(-10, 0))}, "node02"},
		{"4. then the fewest victims (sums tie only when a victim has priority MinInt32, which counts 0)",
			[]*framework.Candidate{cand("node01", 0, victim(5, 0), victim(math.MinInt32, 0)), cand("node02", 0, victim(5, 0))}, "node02"},
		{"5. then the latest start among the most important victims: the least work is lost",
			[]*framework.Candidate{cand("node01", 0, victim(5, 9), victim(0, 12)), cand("node02", 0, victim(5, 11), victim(0, 8))}, "node02"},
		{"5. a victim that has not started yet counts as starting now, later than any other",
			[]*framework.Candidate{cand("node01", 0, victim(5, 11)), cand("node02", 0, victim(5, 0))}, "node02"},
		{"6. then the first candidate",
			[]*framework.Candidate{cand("node01", 0, victim(5, 9)), cand("node02", 0, victim(5, 9)), cand("node03", 0, victim(5, 9))}, "node01"},
		{"a single candidate is chosen without comparing",
			[]*framework.Candidate{cand("node07", 3, victim(100, 0))}, "node07"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pickOneNode(tt.candidates).Node; got != tt.want {
				t.Errorf("picked %s, want %s", got, tt.want)
			}
		})
	}
}
