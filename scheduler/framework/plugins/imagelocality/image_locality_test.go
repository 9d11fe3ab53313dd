package imagelocality

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/cache"
	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestImageLocalityScore(t *testing.T) {
	const mb = 1024 * 1024
	nodes := []*framework.NodeInfo{
		st.NodeInfo(st.MakeNode("node01").Image(500*mb, "soscscs/myapp:v1").Image(300*mb, "redis:7", "docker.io/library/redis:7").Obj()),
		st.NodeInfo(st.MakeNode("node02").Image(500*mb, "soscscs/myapp:v1").Image(2000*mb, "big:1").Obj()),
		st.NodeInfo(st.MakeNode("node03").Image(10*mb, "busybox:latest").Obj()),
		st.NodeInfo(st.MakeNode("node04").Obj()),
	}
	snap := cache.NewSnapshot(nodes...)
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []int64 // node01..node04
	}{
		{"worked example: a 500MB image on 2 of 4 nodes scales to 250MB and scores 23 there, 0 elsewhere",
			st.MakePod("p").Image("soscscs/myapp:v1").Obj(), []int64{23, 23, 0, 0}},
		{"a 300MB image on 1 node of 4 counts 75MB: 5",
			st.MakePod("p").Image("redis:7").Obj(), []int64{5, 0, 0, 0}},
		{"an image without a tag means :latest, and a small image counts nothing",
			st.MakePod("p").Image("busybox").Obj(), []int64{0, 0, 0, 0}},
		{"a 2000MB image on 1 of 4 nodes counts 500MB, below the 1000MB cap: 48",
			st.MakePod("p").Image("big:1").Obj(), []int64{0, 48, 0, 0}},
		{"with two containers the cap doubles: myapp (250MB) + redis (75MB) = 325MB of 2000MB → 15",
			st.MakePod("p").Image("soscscs/myapp:v1").Image("redis:7").Obj(), []int64{15, 11, 0, 0}},
		{"init containers count too",
			func() *corev1.Pod {
				p := st.MakePod("p").Image("soscscs/myapp:v1").Obj()
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "big:1"}}
				return p
			}(), []int64{11, 36, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, state, pi := New(), framework.NewCycleState(), framework.NewPodInfo(tt.pod)
			if s := pl.PreScore(state, pi, nodes, snap); !s.IsSuccess() {
				t.Fatal(s.Message())
			}
			for i, n := range nodes {
				got, s := pl.Score(state, pi, n)
				if !s.IsSuccess() || got != tt.want[i] {
					t.Errorf("%s: score %d (%v), want %d", n.Node().Name, got, s.Message(), tt.want[i])
				}
			}
		})
	}
}

func TestAnImageNoNodeHasSkipsThePlugin(t *testing.T) {
	snap := cache.NewSnapshot(st.NodeInfo(st.MakeNode("node01").Image(500*1024*1024, "redis:7").Obj()))
	s := New().PreScore(framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Image("nginx:1.25").Obj()), snap.List(), snap)
	if s.Code() != framework.Skip || s.Message() != "no node has any of the pod's images" {
		t.Errorf("PreScore = %v %q, want Skip", s.Code(), s.Message())
	}
}

func TestNormalizedImageName(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                      "nginx:latest",
		"nginx:1.25":                 "nginx:1.25",
		"registry.local:5000/app":    "registry.local:5000/app:latest",
		"registry.local:5000/app:v2": "registry.local:5000/app:v2",
	} {
		if got := normalizedImageName(in); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}
