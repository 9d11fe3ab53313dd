package nodeaffinity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	corev1nodeaffinity "k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// The plugin parses and matches node selectors itself, to show how it is
// done. This test runs one table of pods, each against every node below,
// through the plugin and through the library kube-scheduler uses,
// k8s.io/component-helpers/scheduling/corev1/nodeaffinity, and asserts
// that they agree.

var libraryNodes = []*corev1.Node{
	st.MakeNode("node01").Label("myname", "liliang").Label("disk", "ssd").Label("cpus", "16").Obj(),
	st.MakeNode("node02").Label("myname", "scj").Label("zone", "a").Label("cpus", "4").Obj(),
	st.MakeNode("node03").Obj(),
	st.MakeNode("node04").Label("disk", "hdd").Label("cpus", "many").Label("gpu", "").Obj(),
}

func fields(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchFields: reqs}
}

func TestRequiredNodeAffinityAgreesWithComponentHelpers(t *testing.T) {
	in, notIn, exists, doesNotExist := corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist
	gt, lt := corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt
	tests := []struct {
		name string
		pod  *corev1.Pod
	}{
		{"no nodeSelector and no affinity", st.MakePod("p").Obj()},
		{"a nodeSelector", st.MakePod("p").NodeSelector("disk", "ssd").Obj()},
		{"a nodeSelector of two labels", st.MakePod("p").NodeSelector("myname", "scj").NodeSelector("zone", "a").Obj()},
		{"a nodeSelector on an empty label value", st.MakePod("p").NodeSelector("gpu", "").Obj()},
		{"seed 三.3: NotIn [liliang, scj]", st.MakePod("p").RequiredNodeAffinity(st.Expr("myname", notIn, "liliang", "scj")).Obj()},
		{"In", st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", in, "ssd", "nvme")).Obj()},
		{"In without values, which the API server refuses", st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", in)).Obj()},
		{"Exists", st.MakePod("p").RequiredNodeAffinity(st.Expr("gpu", exists)).Obj()},
		{"DoesNotExist", st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", doesNotExist)).Obj()},
		{"Gt, on labels that are and are not integers", st.MakePod("p").RequiredNodeAffinity(st.Expr("cpus", gt, "8")).Obj()},
		{"Lt", st.MakePod("p").RequiredNodeAffinity(st.Expr("cpus", lt, "8")).Obj()},
		{"Gt with a value that is not an integer", st.MakePod("p").RequiredNodeAffinity(st.Expr("cpus", gt, "eight")).Obj()},
		{"an unknown operator", st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", "Like", "ssd")).Obj()},
		{"a key that is not a label key", st.MakePod("p").RequiredNodeAffinity(st.Expr("not a key!", exists)).Obj()},
		{"expressions of one term are ANDed",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", exists), st.Expr("cpus", gt, "8")).Obj()},
		{"terms are ORed",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", in, "hdd")).RequiredNodeAffinity(st.Expr("zone", in, "a")).Obj()},
		{"a term that does not parse, ORed with one that matches",
			st.MakePod("p").RequiredNodeAffinity(st.Expr("disk", "Like", "ssd")).RequiredNodeAffinity(st.Expr("myname", exists)).Obj()},
		{"matchFields metadata.name In", st.MakePod("p").RequiredNodeAffinityTerm(fields(st.Expr("metadata.name", in, "node03"))).Obj()},
		{"matchFields metadata.name NotIn", st.MakePod("p").RequiredNodeAffinityTerm(fields(st.Expr("metadata.name", notIn, "node03"))).Obj()},
		{"matchFields with two values", st.MakePod("p").RequiredNodeAffinityTerm(fields(st.Expr("metadata.name", in, "node01", "node02"))).Obj()},
		{"matchFields with Exists", st.MakePod("p").RequiredNodeAffinityTerm(fields(st.Expr("metadata.name", exists))).Obj()},
		{"matchFields on another field In", st.MakePod("p").RequiredNodeAffinityTerm(fields(st.Expr("metadata.uid", in, "x"))).Obj()},
		{"matchFields on another field NotIn", st.MakePod("p").RequiredNodeAffinityTerm(fields(st.Expr("metadata.uid", notIn, "x"))).Obj()},
		{"matchFields and matchExpressions of one term are ANDed",
			st.MakePod("p").RequiredNodeAffinityTerm(corev1.NodeSelectorTerm{
				MatchExpressions: []corev1.NodeSelectorRequirement{st.Expr("disk", exists)},
				MatchFields:      []corev1.NodeSelectorRequirement{st.Expr("metadata.name", notIn, "node01")}}).Obj()},
		{"an empty term", st.MakePod("p").RequiredNodeAffinityTerm(corev1.NodeSelectorTerm{}).Obj()},
		{"an empty term ORed with one that matches",
			st.MakePod("p").RequiredNodeAffinityTerm(corev1.NodeSelectorTerm{}).RequiredNodeAffinity(st.Expr("zone", exists)).Obj()},
		{"a required affinity without terms", with(st.MakePod("p").Obj(), func(a *corev1.NodeAffinity) {
			a.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
		})},
		{"a nodeSelector and a required affinity",
			st.MakePod("p").NodeSelector("disk", "ssd").RequiredNodeAffinity(st.Expr("myname", notIn, "scj")).Obj()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := corev1nodeaffinity.GetRequiredNodeAffinity(tt.pod)
			for _, node := range libraryNodes {
				lib, _ := want.Match(node) // the error only explains a term that did not parse
				if got := filter(tt.pod, node).IsSuccess(); got != lib {
					t.Errorf("%s: the plugin says fits=%v, component-helpers %v", node.Name, got, lib)
				}
			}
		})
	}
}

func TestPreferredNodeAffinityAgreesWithComponentHelpers(t *testing.T) {
	in, exists := corev1.NodeSelectorOpIn, corev1.NodeSelectorOpExists
	tests := []struct {
		name string
		pod  *corev1.Pod
	}{
		{"seed 三.3: weight 1 for node03", st.MakePod("p").PreferredNodeAffinity(1, st.Expr(corev1.LabelHostname, in, "node03")).Obj()},
		{"the weights of the terms a node matches add up",
			st.MakePod("p").PreferredNodeAffinity(20, st.Expr("disk", exists)).PreferredNodeAffinity(30, st.Expr("cpus", corev1.NodeSelectorOpLt, "8")).Obj()},
		{"a term of weight 0 counts for nothing",
			st.MakePod("p").PreferredNodeAffinity(0, st.Expr("disk", exists)).PreferredNodeAffinity(7, st.Expr("zone", exists)).Obj()},
		{"an empty preference counts for nothing", st.MakePod("p").PreferredNodeAffinity(9).PreferredNodeAffinity(2, st.Expr("gpu", exists)).Obj()},
		{"no preferred terms", st.MakePod("p").Obj()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var preferred []corev1.PreferredSchedulingTerm
			if a := tt.pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
				preferred = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			}
			want, err := corev1nodeaffinity.NewPreferredSchedulingTerms(preferred)
			if err != nil {
				t.Fatal(err)
			}
			pl, state, pi := New(), framework.NewCycleState(), framework.NewPodInfo(tt.pod)
			skipped := pl.PreScore(state, pi, nil, nil).Code() == framework.Skip
			for _, node := range libraryNodes {
				var got int64 // a skipped score is 0 on every node
				if !skipped {
					got, _ = pl.Score(state, pi, st.NodeInfo(node))
				}
				if lib := want.Score(node); got != lib {
					t.Errorf("%s: the plugin scores %d before normalizing, component-helpers %d", node.Name, got, lib)
				}
			}
		})
	}
}

// with returns pod after f changed its node affinity.
func with(pod *corev1.Pod, f func(*corev1.NodeAffinity)) *corev1.Pod {
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	f(pod.Spec.Affinity.NodeAffinity)
	return pod
}
