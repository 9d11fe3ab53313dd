package nodeaffinity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// filter runs PreFilter and, unless it skipped, Filter, as a cycle does.
func filter(pod *corev1.Pod, node *corev1.Node) *framework.Status {
	pl, state, pi := New(), framework.NewCycleState(), framework.NewPodInfo(pod)
	if s := pl.PreFilter(state, pi, nil); s.Code() == framework.Skip {
		return nil
	}
	return pl.Filter(state, pi, st.NodeInfo(node))
}

func TestNodeSelector(t *testing.T) {
	node01 := st.MakeNode("node01").Label("myname", "scj").Label("disk", "ssd").Obj()
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"a pod without nodeSelector fits every node", st.MakePod("p").Obj(), ""},
		{"a pod whose nodeSelector matches the node's label fits", st.MakePod("p").NodeSelector("myname", "scj").Obj(), ""},
		{"a pod whose nodeSelector names another value does not fit", st.MakePod("p").NodeSelector("myname", "chen").Obj(), ErrReasonPod},
		{"a pod whose nodeSelector names a label the node lacks does not fit", st.MakePod("p").NodeSelector("zone", "a").Obj(), ErrReasonPod},
		{"every entry of the nodeSelector must match", st.MakePod("p").NodeSelector("myname", "scj").NodeSelector("disk", "hdd").Obj(), ErrReasonPod},
		{"a nodeSelector on kubernetes.io/hostname picks one node", st.MakePod("p").NodeSelector(corev1.LabelHostname, "node01").Obj(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := filter(tt.pod, node01); got.Message() != tt.want {
				t.Fatalf("got %q, want %q", got.Message(), tt.want)
			}
		})
	}
}

func TestRequiredNodeAffinity(t *testing.T) {
	notInLiliangScj := st.Expr("myname", corev1.NodeSelectorOpNotIn, "liliang", "scj")
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want bool
	}{
		{"seed 三.3: NotIn [liliang, scj] rejects node01 labelled myname=liliang",
			st.MakePod("affinity").RequiredNodeAffinity(notInLiliangScj).Obj(), st.MakeNode("node01").Label("myname", "liliang").Obj(), false},
		{"seed 三.3: NotIn [liliang, scj] rejects node02 labelled myname=scj",
			st.MakePod("affinity").RequiredNodeAffinity(notInLiliangScj).Obj(), st.MakeNode("node02").Label("myname", "scj").Obj(), false},
		{"seed 三.3: NotIn [liliang, scj] accepts node03, which has no myname label",
			st.MakePod("affinity").RequiredNodeAffinity(notInLiliangScj).Obj(), st.MakeNode("node03").Obj(), true},
		{"In accepts a node whose label value is listed",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", corev1.NodeSelectorOpIn, "ssd", "nvme")).Obj(), st.MakeNode("n").Label("disk", "nvme").Obj(), true},
		{"In rejects a node without the label",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", corev1.NodeSelectorOpIn, "ssd")).Obj(), st.MakeNode("n").Obj(), false},
		{"Exists accepts any value of the label",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("gpu", corev1.NodeSelectorOpExists)).Obj(), st.MakeNode("n").Label("gpu", "").Obj(), true},
		{"DoesNotExist rejects a node carrying the label",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("gpu", corev1.NodeSelectorOpDoesNotExist)).Obj(), st.MakeNode("n").Label("gpu", "a100").Obj(), false},
		{"Gt compares the label as an integer: 16 > 8",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("cpus", corev1.NodeSelectorOpGt, "8")).Obj(), st.MakeNode("n").Label("cpus", "16").Obj(), true},
		{"Gt: 4 is not > 8 (a string comparison would say it is)",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("cpus", corev1.NodeSelectorOpGt, "8")).Obj(), st.MakeNode("n").Label("cpus", "4").Obj(), false},
		{"Lt: 4 < 8",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("cpus", corev1.NodeSelectorOpLt, "8")).Obj(), st.MakeNode("n").Label("cpus", "4").Obj(), true},
		{"Lt rejects a node without the label",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("cpus", corev1.NodeSelectorOpLt, "8")).Obj(), st.MakeNode("n").Obj(), false},
		{"Gt with a value that is not an integer matches no node",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("cpus", corev1.NodeSelectorOpGt, "eight")).Obj(), st.MakeNode("n").Label("cpus", "16").Obj(), false},
		{"expressions of one term are ANDed",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", corev1.NodeSelectorOpIn, "ssd"), st.Expr("zone", corev1.NodeSelectorOpIn, "a")).Obj(),
			st.MakeNode("n").Label("disk", "ssd").Label("zone", "b").Obj(), false},
		{"terms are ORed: the second term matches",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", corev1.NodeSelectorOpIn, "ssd")).RequiredNodeAffinity(st.Expr("zone", corev1.NodeSelectorOpIn, "b")).Obj(),
			st.MakeNode("n").Label("disk", "hdd").Label("zone", "b").Obj(), true},
		{"matchFields metadata.name In picks the node by name",
			st.MakePod("p").RequiredNodeAffinityTerm(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{st.Expr("metadata.name", corev1.NodeSelectorOpIn, "node03")}}).Obj(),
			st.MakeNode("node03").Obj(), true},
		{"matchFields metadata.name NotIn keeps the pod off that node",
			st.MakePod("p").RequiredNodeAffinityTerm(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{st.Expr("metadata.name", corev1.NodeSelectorOpNotIn, "node03")}}).Obj(),
			st.MakeNode("node03").Obj(), false},
		{"matchFields and matchExpressions of one term are ANDed",
			st.MakePod("p").RequiredNodeAffinityTerm(corev1.NodeSelectorTerm{
				MatchExpressions: []corev1.NodeSelectorRequirement{st.Expr("disk", corev1.NodeSelectorOpIn, "ssd")},
				MatchFields:      []corev1.NodeSelectorRequirement{st.Expr("metadata.name", corev1.NodeSelectorOpIn, "node03")}}).Obj(),
			st.MakeNode("node03").Label("disk", "hdd").Obj(), false},
		{"an empty nodeSelectorTerm matches no node",
			st.MakePod("p").RequiredNodeAffinityTerm(corev1.NodeSelectorTerm{}).Obj(), st.MakeNode("n").Obj(), false},
		{"nodeSelector and required affinity must both hold",
			st.MakePod("p").NodeSelector("disk", "ssd").RequiredNodeAffinity(st.Expr("zone", corev1.NodeSelectorOpExists)).Obj(),
			st.MakeNode("n").Label("zone", "a").Obj(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := filter(tt.pod, tt.node)
			if got.IsSuccess() != tt.want {
				t.Fatalf("fits = %v (%q), want %v", got.IsSuccess(), got.Message(), tt.want)
			}
			if !tt.want && (got.Code() != framework.UnschedulableAndUnresolvable || got.Message() != ErrReasonPod) {
				t.Errorf("status = %v %q", got.Code(), got.Message())
			}
		})
	}
}

func TestFilterWithoutPreFilterParsesThePod(t *testing.T) {
	pod := framework.NewPodInfo(st.MakePod("p").NodeSelector("disk", "ssd").Obj())
	if s := New().Filter(framework.NewCycleState(), pod, st.NodeInfo(st.MakeNode("n").Obj())); s.Message() != ErrReasonPod {
		t.Errorf("got %q", s.Message())
	}
}

func TestPreferredNodeAffinityScore(t *testing.T) {
	nodes := []*corev1.Node{
		st.MakeNode("node01").Label("disk", "ssd").Obj(),
		st.MakeNode("node02").Label("disk", "ssd").Label("zone", "a").Obj(),
		st.MakeNode("node03").Obj(),
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		want     []int64 // node01, node02, node03
		wantSkip bool
	}{
		{"seed 三.3: the weight-1 preference for node03 gives node03 100 and the others 0",
			st.MakePod("p").PreferredNodeAffinity(1, st.Expr(corev1.LabelHostname, corev1.NodeSelectorOpIn, "node03")).Obj(), []int64{0, 0, 100}, false},
		{"weights of matching terms add up and the best node scores 100: 20 → 40, 20+30 → 100",
			st.MakePod("p").PreferredNodeAffinity(20, st.Expr("disk", corev1.NodeSelectorOpIn, "ssd")).PreferredNodeAffinity(30, st.Expr("zone", corev1.NodeSelectorOpExists)).Obj(),
			[]int64{40, 100, 0}, false},
		{"when no node matches, every node scores 0",
			st.MakePod("p").PreferredNodeAffinity(5, st.Expr("gpu", corev1.NodeSelectorOpExists)).Obj(), []int64{0, 0, 0}, false},
		{"a pod without preferred terms skips the score", st.MakePod("p").Obj(), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, state, pi := New(), framework.NewCycleState(), framework.NewPodInfo(tt.pod)
			var infos []*framework.NodeInfo
			for _, n := range nodes {
				infos = append(infos, st.NodeInfo(n))
			}
			if s := pl.PreScore(state, pi, infos, nil); (s.Code() == framework.Skip) != tt.wantSkip {
				t.Fatalf("PreScore = %v, want skip %v", s.Code(), tt.wantSkip)
			}
			if tt.wantSkip {
				return
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
