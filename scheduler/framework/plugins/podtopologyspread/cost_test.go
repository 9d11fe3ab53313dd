package podtopologyspread

import (
	"fmt"
	"testing"

	"github.com/mkube/mkube/scheduler/cache"
	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// The scheduling benchmark's pods have no constraints, no controller and
// no Service: for them the plugin must cost nothing per node, or a 5000
// node cycle pays for spreading that does not happen.
func TestABarePodSkipsWithoutAllocating(t *testing.T) {
	var nodes []*framework.NodeInfo
	for i := range 1000 {
		nodes = append(nodes, st.NodeInfo(st.MakeNode(fmt.Sprintf("node%04d", i)).Zone(fmt.Sprint("zone-", i%3)).Obj(),
			st.MakePod(fmt.Sprintf("p%d", i)).Label("app", "web").NodeName(fmt.Sprintf("node%04d", i)).Obj()))
	}
	snap := cache.NewSnapshot(nodes...)
	pl, pod := New(framework.Handle{}), framework.NewPodInfo(st.MakePod("bare").Label("app", "web").Obj())
	state := framework.NewCycleState()
	allocs := testing.AllocsPerRun(10, func() {
		if s := pl.PreFilter(state, pod, snap); s.Code() != framework.Skip {
			t.Fatalf("PreFilter: %v, want Skip", s.Message())
		}
		if s := pl.PreScore(state, pod, nodes, snap); s.Code() != framework.Skip {
			t.Fatalf("PreScore: %v, want Skip", s.Message())
		}
	})
	if allocs != 0 {
		t.Errorf("PreFilter and PreScore of a bare pod over 1000 nodes allocate %v times, want 0", allocs)
	}
}

// A ReplicaSet's pod is the common case: its PreScore allocates per
// cycle, never per node (the label index is built once per node and kept
// while the node's pods do not change).
func TestAReplicaSetPodAllocatesPerCycleNotPerNode(t *testing.T) {
	build := func(n int) (*cache.Snapshot, []*framework.NodeInfo) {
		var nodes []*framework.NodeInfo
		for i := range n {
			name := fmt.Sprintf("node%04d", i)
			nodes = append(nodes, st.NodeInfo(st.MakeNode(name).Zone(fmt.Sprint("zone-", i%3)).Obj(),
				web("w"+name, name).Obj(), st.MakePod("o"+name).Label("app", "other").NodeName(name).Obj()))
		}
		return cache.NewSnapshot(nodes...), nodes
	}
	pl, pod := New(testHandle), framework.NewPodInfo(web("new", "").Obj())
	perCycle := func(n int) float64 {
		snap, nodes := build(n)
		return testing.AllocsPerRun(10, func() {
			state := framework.NewCycleState()
			if s := pl.PreScore(state, pod, nodes, snap); !s.IsSuccess() {
				t.Fatalf("PreScore: %v", s.Message())
			}
			for _, n := range nodes {
				pl.Score(state, pod, n)
			}
		})
	}
	small, big := perCycle(10), perCycle(1000)
	t.Logf("allocations per cycle: %v over 10 nodes, %v over 1000", small, big)
	if big > small+5 {
		t.Errorf("a cycle allocates %v times over 10 nodes and %v over 1000: it allocates per node", small, big)
	}
}
