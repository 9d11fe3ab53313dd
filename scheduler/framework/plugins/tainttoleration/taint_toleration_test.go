package tainttoleration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestTaintTolerationFilter(t *testing.T) {
	tainted := st.MakeNode("node01").Taint("key1", "value1", corev1.TaintEffectNoSchedule).Obj()
	const rejected = "node(s) had untolerated taint {key1: value1}"
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want string // "" = fits
	}{
		{"a pod with no tolerations can't be scheduled onto a node with taints",
			st.MakePod("p").Obj(), tainted, rejected},
		{"a pod with no tolerations can be scheduled onto a node without taints",
			st.MakePod("p").Obj(), st.MakeNode("node02").Obj(), ""},
		{"an Equal toleration with the taint's key, value and effect tolerates it",
			st.MakePod("p").Toleration("key1", corev1.TolerationOpEqual, "value1", corev1.TaintEffectNoSchedule).Obj(), tainted, ""},
		{"an empty operator means Equal",
			st.MakePod("p").Toleration("key1", "", "value1", corev1.TaintEffectNoSchedule).Obj(), tainted, ""},
		{"an Equal toleration with another value does not tolerate it",
			st.MakePod("p").Toleration("key1", corev1.TolerationOpEqual, "value2", corev1.TaintEffectNoSchedule).Obj(), tainted, rejected},
		{"an Exists toleration tolerates every value of its key",
			st.MakePod("p").Toleration("key1", corev1.TolerationOpExists, "", corev1.TaintEffectNoSchedule).Obj(), tainted, ""},
		{"a toleration without effect matches every effect",
			st.MakePod("p").Toleration("key1", corev1.TolerationOpEqual, "value1", "").Obj(), tainted, ""},
		{"a toleration of another effect does not tolerate the taint",
			st.MakePod("p").Toleration("key1", corev1.TolerationOpExists, "", corev1.TaintEffectNoExecute).Obj(), tainted, rejected},
		{"an empty key with Exists tolerates every taint",
			st.MakePod("p").Toleration("", corev1.TolerationOpExists, "", "").Obj(),
			st.MakeNode("n").Taint("a", "1", corev1.TaintEffectNoSchedule).Taint("b", "", corev1.TaintEffectNoExecute).Obj(), ""},
		{"a NoExecute taint keeps new pods off too",
			st.MakePod("p").Obj(), st.MakeNode("n").Taint("check", "mycheck", corev1.TaintEffectNoExecute).Obj(),
			"node(s) had untolerated taint {check: mycheck}"},
		{"a PreferNoSchedule taint does not filter",
			st.MakePod("p").Obj(), st.MakeNode("n").Taint("node-role.kubernetes.io/master", "", corev1.TaintEffectPreferNoSchedule).Obj(), ""},
		{"the reason names the first taint the pod does not tolerate",
			st.MakePod("p").Toleration("a", corev1.TolerationOpExists, "", "").Obj(),
			st.MakeNode("n").Taint("a", "1", corev1.TaintEffectNoSchedule).Taint("b", "2", corev1.TaintEffectNoSchedule).Obj(),
			"node(s) had untolerated taint {b: 2}"},
		{"a taint registered by a kubelet (--register-with-taints) without value reads {key: }",
			st.MakePod("p").Obj(), st.MakeNode("n").Taint("node-role.kubernetes.io/control-plane", "", corev1.TaintEffectNoSchedule).Obj(),
			"node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"},
		{"the numeric operators Gt and Lt, an alpha feature, tolerate nothing",
			st.MakePod("p").Toleration("key1", corev1.TolerationOpGt, "0", "").Obj(), tainted, rejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New().Filter(framework.NewCycleState(), framework.NewPodInfo(tt.pod), st.NodeInfo(tt.node))
			if got.Message() != tt.want {
				t.Fatalf("got %q, want %q", got.Message(), tt.want)
			}
			if tt.want != "" && got.Code() != framework.UnschedulableAndUnresolvable {
				t.Errorf("code = %v, want UnschedulableAndUnresolvable", got.Code())
			}
		})
	}
}

func TestTaintTolerationScore(t *testing.T) {
	master := st.MakeNode("master").Taint("node-role.kubernetes.io/master", "", corev1.TaintEffectPreferNoSchedule).Obj()
	twice := st.MakeNode("node01").Taint("a", "1", corev1.TaintEffectPreferNoSchedule).Taint("b", "2", corev1.TaintEffectPreferNoSchedule).Obj()
	clean := st.MakeNode("node02").Obj()
	noSchedule := st.MakeNode("node03").Taint("c", "3", corev1.TaintEffectNoSchedule).Obj()
	tests := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*corev1.Node
		want  []int64
	}{
		{"seed 四: a master tainted PreferNoSchedule scores 0, the untainted nodes 100",
			st.MakePod("p").Obj(), []*corev1.Node{master, clean}, []int64{0, 100}},
		{"fewer intolerable taints score higher: 2 → 0, 1 → 50, 0 → 100",
			st.MakePod("p").Obj(), []*corev1.Node{twice, master, clean}, []int64{0, 50, 100}},
		{"a tolerated PreferNoSchedule taint does not count",
			st.MakePod("p").Toleration("node-role.kubernetes.io/master", corev1.TolerationOpExists, "", corev1.TaintEffectPreferNoSchedule).Obj(),
			[]*corev1.Node{master, clean}, []int64{100, 100}},
		{"a toleration for NoSchedule only does not help with PreferNoSchedule",
			st.MakePod("p").Toleration("node-role.kubernetes.io/master", corev1.TolerationOpExists, "", corev1.TaintEffectNoSchedule).Obj(),
			[]*corev1.Node{master, clean}, []int64{0, 100}},
		{"NoSchedule taints do not count in the score (the filter handles them)",
			st.MakePod("p").Obj(), []*corev1.Node{noSchedule, master}, []int64{100, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, state, pi := New(), framework.NewCycleState(), framework.NewPodInfo(tt.pod)
			var infos []*framework.NodeInfo
			for _, n := range tt.nodes {
				infos = append(infos, st.NodeInfo(n))
			}
			if s := pl.PreScore(state, pi, infos, nil); !s.IsSuccess() {
				t.Fatalf("PreScore = %v", s.Code())
			}
			scores := make([]framework.NodeScore, len(infos))
			for i, n := range infos {
				s, _ := pl.Score(state, pi, n)
				scores[i] = framework.NodeScore{Name: n.Node().Name, Score: s}
			}
			pl.NormalizeScore(state, pi, scores)
			for i, want := range tt.want {
				if scores[i].Score != want {
					t.Errorf("%s scored %d, want %d", scores[i].Name, scores[i].Score, want)
				}
			}
		})
	}
}

func TestTaintTolerationScoreSkipsWhenNoNodeHasAPreferNoScheduleTaint(t *testing.T) {
	nodes := []*framework.NodeInfo{
		st.NodeInfo(st.MakeNode("node01").Taint("c", "3", corev1.TaintEffectNoSchedule).Obj()),
		st.NodeInfo(st.MakeNode("node02").Obj()),
	}
	if s := New().PreScore(framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Obj()), nodes, nil); s.Code() != framework.Skip {
		t.Errorf("PreScore = %v, want Skip: every node would score 100", s.Code())
	}
}
