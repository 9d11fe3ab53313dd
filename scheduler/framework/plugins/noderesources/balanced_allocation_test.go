package noderesources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestBalancedAllocationScore(t *testing.T) {
	pod := st.MakePod("p").Req("1", "1Gi").Obj()
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *framework.NodeInfo
		want int64
	}{
		{"seed 二.3: node01 at cpu 20%, memory 60% with the pod scores (1 - |0.2-0.6|/2) × 100 = 80",
			pod, st.NodeInfo(st.MakeNode("node01").Allocatable("10", "10Gi").Obj(), st.MakePod("a").Req("1", "5Gi").Obj()), 80},
		{"seed 二.3: node02 at cpu 50%, memory 50% is perfectly balanced and scores 100",
			pod, st.NodeInfo(st.MakeNode("node02").Allocatable("10", "10Gi").Obj(), st.MakePod("a").Req("4", "4Gi").Obj()), 100},
		{"a fraction above 1 counts as 1: cpu 200%, memory 10% → std 0.45 → 55",
			pod, st.NodeInfo(st.MakeNode("n").Allocatable("1", "20Gi").Obj(), st.MakePod("a").Req("1", "1Gi").Obj()), 55},
		{"containers without requests count nothing here (no non-zero defaults)",
			st.MakePod("p").Req("1", "").Obj(), st.NodeInfo(st.MakeNode("n").Allocatable("10", "10Gi").Obj(), st.MakePod("a").Req("", "").Obj()), 95},
		{"a node without allocatable memory is balanced on cpu alone",
			pod, st.NodeInfo(st.MakeNode("n").AllocatableResource(corev1.ResourceCPU, "4").Obj()), 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, s := NewBalancedAllocation().Score(framework.NewCycleState(), framework.NewPodInfo(tt.pod), tt.node)
			if !s.IsSuccess() || got != tt.want {
				t.Errorf("score = %d (%v), want %d", got, s.Message(), tt.want)
			}
		})
	}
}

func TestBalancedAllocationSkipsBestEffortPods(t *testing.T) {
	b := NewBalancedAllocation()
	if s := b.PreScore(framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Req("", "").Obj()), nil, nil); s.Code() != framework.Skip {
		t.Errorf("best-effort pod: PreScore = %v, want Skip", s.Code())
	}
	if s := b.PreScore(framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Req("100m", "").Obj()), nil, nil); !s.IsSuccess() {
		t.Errorf("burstable pod: PreScore = %v, want Success", s.Code())
	}
}

func TestBalancedAllocationBreaksTheSeedTieThatLeastAllocatedGetsWrong(t *testing.T) {
	// Seed 二.3: "虽然 node01 的总使用率比 node02 低，但 node02 的 CPU 和
	// Memory 使用率更接近，从而调度时会优选 node02".
	pod := framework.NewPodInfo(st.MakePod("p").Req("1", "1Gi").Obj())
	node01 := st.NodeInfo(st.MakeNode("node01").Allocatable("10", "10Gi").Obj(), st.MakePod("a").Req("1", "5Gi").Obj())
	node02 := st.NodeInfo(st.MakeNode("node02").Allocatable("10", "10Gi").Obj(), st.MakePod("b").Req("4", "4Gi").Obj())
	total := func(n *framework.NodeInfo) int64 {
		l, _ := New().Score(framework.NewCycleState(), pod, n)
		b, _ := NewBalancedAllocation().Score(framework.NewCycleState(), pod, n)
		return l + b
	}
	if t1, t2 := total(node01), total(node02); t1 != 140 || t2 != 150 {
		t.Errorf("LeastAllocated + BalancedAllocation: node01 %d, node02 %d; want 140 and 150", t1, t2)
	}
}

func TestMostAllocatedScore(t *testing.T) {
	f, err := NewWithArgs(FitArgs{ScoringStrategy: &ScoringStrategy{Type: MostAllocated}})
	if err != nil {
		t.Fatal(err)
	}
	pod := framework.NewPodInfo(st.MakePod("p").Req("1", "1Gi").Obj())
	for _, tc := range []struct {
		name string
		node *framework.NodeInfo
		want int64
	}{
		{"node01 of the worked example, the fuller, scores 68", st.NodeInfo(st.MakeNode("node01").Allocatable("4", "8Gi").Obj(), st.MakePod("a").Req("1", "6Gi").Obj()), 68},
		{"node02 of the worked example, empty, scores 37", st.NodeInfo(st.MakeNode("node02").Allocatable("2", "4Gi").Obj()), 37},
	} {
		if got, _ := f.Score(framework.NewCycleState(), pod, tc.node); got != tc.want {
			t.Errorf("%s: got %d", tc.name, got)
		}
	}
	if _, err := NewWithArgs(FitArgs{ScoringStrategy: &ScoringStrategy{Type: "RequestedToCapacityRatio"}}); err == nil {
		t.Error("an unsupported strategy was accepted")
	}
}
