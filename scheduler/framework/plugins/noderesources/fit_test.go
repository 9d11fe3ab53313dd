package noderesources

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestFitFilter(t *testing.T) {
	node := st.MakeNode("node01").Allocatable("4", "8Gi").Obj()
	// Two pods already there request cpu 2.5 and memory 3Gi.
	busy := st.NodeInfo(node, st.MakePod("a").Req("2", "2Gi").Obj(), st.MakePod("b").Req("500m", "1Gi").Obj())

	tests := []struct {
		name string
		pod  *corev1.Pod
		node *framework.NodeInfo
		want []string // nil: fits
	}{
		{"a pod requesting 2 cpu does not fit a node with 1.5 cpu left",
			st.MakePod("p").Req("2", "1Gi").Obj(), busy, []string{"Insufficient cpu"}},
		{"a pod requesting 1.5 cpu fits a node with exactly 1.5 cpu left",
			st.MakePod("p").Req("1500m", "1Gi").Obj(), busy, nil},
		{"a pod too big in cpu and memory gets both reasons",
			st.MakePod("p").Req("3", "6Gi").Obj(), busy, []string{"Insufficient cpu", "Insufficient memory"}},
		{"a pod requesting nothing fits even an overcommitted node",
			st.MakePod("p").Req("", "").Obj(), st.NodeInfo(node, st.MakePod("a").Req("5", "9Gi").Obj()), nil},
		{"a pod does not fit a node whose pod slots are all taken",
			st.MakePod("p").Req("", "").Obj(),
			st.NodeInfo(st.MakeNode("small").Allocatable("4", "8Gi").AllocatableResource(corev1.ResourcePods, "1").Obj(), st.MakePod("a").Obj()),
			[]string{"Too many pods"}},
		{"an init container larger than the free cpu keeps the pod out",
			st.MakePod("p").Req("100m", "").InitContainer("2", "").Obj(), busy, []string{"Insufficient cpu"}},
		{"a pod requesting a gpu does not fit a node without gpus",
			st.MakePod("p").ExtendedReq("nvidia.com/gpu", "1").Obj(), st.NodeInfo(node), []string{"Insufficient nvidia.com/gpu"}},
		{"a pod requesting a gpu fits a node that has one free",
			st.MakePod("p").ExtendedReq("nvidia.com/gpu", "1").Obj(),
			st.NodeInfo(st.MakeNode("gpu").Allocatable("4", "8Gi").AllocatableResource("nvidia.com/gpu", "1").Obj()), nil},
		{"an empty node without allocatable cpu rejects a pod that requests cpu",
			st.MakePod("p").Req("100m", "").Obj(), st.NodeInfo(st.MakeNode("bare").Obj()), []string{"Insufficient cpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New().Filter(framework.NewCycleState(), framework.NewPodInfo(tt.pod), tt.node)
			if !reflect.DeepEqual(got.Reasons(), tt.want) {
				t.Fatalf("reasons = %q, want %q", got.Reasons(), tt.want)
			}
			if tt.want != nil && got.Code() != framework.Unschedulable {
				t.Errorf("code = %v, want Unschedulable (preemption could help)", got.Code())
			}
		})
	}
}

func TestLeastAllocatedScore(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *framework.NodeInfo
		want int64
	}{
		{"node01 of the worked example: cpu half used, memory 7/8 used, scores 31",
			st.MakePod("p").Req("1", "1Gi").Obj(),
			st.NodeInfo(st.MakeNode("node01").Allocatable("4", "8Gi").Obj(), st.MakePod("a").Req("1", "6Gi").Obj()), 31},
		{"node02 of the worked example: empty and smaller, scores 62",
			st.MakePod("p").Req("1", "1Gi").Obj(),
			st.NodeInfo(st.MakeNode("node02").Allocatable("2", "4Gi").Obj()), 62},
		{"an empty node scores nearly 100 for a small pod",
			st.MakePod("p").Req("10m", "1Mi").Obj(),
			st.NodeInfo(st.MakeNode("n").Allocatable("100", "1000Gi").Obj()), 99},
		{"a pod without requests counts 100m cpu and 200Mi memory: (1000-100)*100/1000=90, (1000-200)*100/1000=80",
			st.MakePod("p").Req("", "").Obj(),
			st.NodeInfo(st.MakeNode("n").Allocatable("1", "1000Mi").Obj()), 85},
		{"pods already there without requests count too",
			st.MakePod("p").Req("", "").Obj(),
			st.NodeInfo(st.MakeNode("n").Allocatable("1", "1000Mi").Obj(), st.MakePod("a").Req("", "").Obj()), 70},
		{"a node overcommitted in cpu scores 0 for cpu",
			st.MakePod("p").Req("2", "0").Obj(),
			st.NodeInfo(st.MakeNode("n").Allocatable("1", "1Gi").Obj()), 50},
		{"a node without allocatable memory is scored on cpu alone",
			st.MakePod("p").Req("500m", "").Obj(),
			st.NodeInfo(st.MakeNode("n").AllocatableResource(corev1.ResourceCPU, "1").Obj()), 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, status := New().Score(framework.NewCycleState(), framework.NewPodInfo(tt.pod), tt.node)
			if !status.IsSuccess() || got != tt.want {
				t.Errorf("score = %d (%v), want %d", got, status.Message(), tt.want)
			}
		})
	}
}
