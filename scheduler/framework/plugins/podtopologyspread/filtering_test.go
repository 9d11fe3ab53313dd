package podtopologyspread

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// twoZones: node01 and node02 in zone a, node03 and node04 in zone b.
func twoZones() []*st.NodeWrapper {
	return []*st.NodeWrapper{
		st.MakeNode("node01").Zone("a"), st.MakeNode("node02").Zone("a"),
		st.MakeNode("node03").Zone("b"), st.MakeNode("node04").Zone("b"),
	}
}

func TestPodTopologySpreadFilter(t *testing.T) {
	const (
		skew    = "Unschedulable " + ErrReasonConstraintsNotMatch
		missing = "UnschedulableAndUnresolvable " + ErrReasonNodeLabelNotMatch
	)
	zone, host := corev1.LabelTopologyZone, corev1.LabelHostname
	withPolicy := func(c corev1.TopologySpreadConstraint, affinity, taints corev1.NodeInclusionPolicy) corev1.TopologySpreadConstraint {
		c.NodeAffinityPolicy, c.NodeTaintsPolicy = &affinity, &taints
		return c
	}
	withMinDomains := func(c corev1.TopologySpreadConstraint, n int32) corev1.TopologySpreadConstraint {
		c.MinDomains = ptr.To(n)
		return c
	}
	withMatchLabelKeys := func(c corev1.TopologySpreadConstraint, keys ...string) corev1.TopologySpreadConstraint {
		c.MatchLabelKeys = keys
		return c
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		snap string // the nodes and pods: see layout
		want string
	}{
		{"maxSkew 1 by zone: zone a (2 pods) would reach 3 against zone b's 1, so only zone b fits",
			spreadPod(web("new", ""), hard(zone, 1)), "2a1b",
			"node01: " + skew + "; node02: " + skew + "; node03: fits; node04: fits"},
		{"maxSkew 2 by zone tolerates zone a's 3 against 1",
			spreadPod(web("new", ""), hard(zone, 2)), "2a1b",
			"node01: fits; node02: fits; node03: fits; node04: fits"},
		{"a pod that its own selector does not select adds nothing to the skew (selfMatch 0)",
			spreadPod(st.MakePod("other").Label("app", "other"), hard(zone, 1)), "2a1b",
			"node01: fits; node02: fits; node03: fits; node04: fits"},
		{"a node without the topology key is rejected as missing the label, which no eviction can fix",
			spreadPod(web("new", ""), hard(zone, 1)), "2a1b+bare",
			"node01: " + skew + "; node02: " + skew + "; node03: fits; node04: fits; node05: " + missing},
		{"by hostname every node is a domain: the nodes with a pod are rejected while one has none",
			spreadPod(web("new", ""), hard(host, 1)), "2a1b",
			"node01: " + skew + "; node02: fits; node03: " + skew + "; node04: fits"},
		{"minDomains 3 with two zones: the global minimum counts as 0, so zone b's 1 pod already rejects",
			spreadPod(web("new", ""), withMinDomains(hard(zone, 1), 3)), "1a1b",
			"node01: " + skew + "; node02: " + skew + "; node03: " + skew + "; node04: " + skew},
		{"minDomains 2 with two zones: the real minimum, 1, is used",
			spreadPod(web("new", ""), withMinDomains(hard(zone, 1), 2)), "1a1b",
			"node01: fits; node02: fits; node03: fits; node04: fits"},
		{"nodeAffinityPolicy Honor (the default): the pods on node04, which the pod's nodeSelector excludes, do not count",
			spreadPod(web("new", "").NodeSelector("disk", "ssd"), hard(zone, 1)), "ssd",
			"node01: fits; node02: fits; node03: fits; node04: fits"},
		{"nodeAffinityPolicy Ignore: node04's 3 pods count, and zone b is over the skew",
			spreadPod(web("new", "").NodeSelector("disk", "ssd"), withPolicy(hard(zone, 1), corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyIgnore)), "ssd",
			"node01: fits; node02: fits; node03: " + skew + "; node04: " + skew},
		{"nodeTaintsPolicy Ignore (the default): the pods on the tainted node04 count",
			spreadPod(web("new", ""), hard(zone, 1)), "tainted",
			"node01: fits; node02: fits; node03: " + skew + "; node04: " + skew},
		{"nodeTaintsPolicy Honor: the pods on node04, whose taint the pod does not tolerate, do not count: zone b has 0, zone a's 1 is over",
			spreadPod(web("new", ""), withPolicy(hard(zone, 1), corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyHonor)), "tainted",
			"node01: " + skew + "; node02: " + skew + "; node03: fits; node04: fits"},
		{"nodeTaintsPolicy Honor with a toleration of the taint: node04's pods count again",
			spreadPod(web("new", "").Toleration("dedicated", corev1.TolerationOpExists, "", corev1.TaintEffectNoSchedule),
				withPolicy(hard(zone, 1), corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyHonor)), "tainted",
			"node01: fits; node02: fits; node03: " + skew + "; node04: " + skew},
		{"matchLabelKeys pod-template-hash: the old revision's pods in zone a do not count against the new one",
			spreadPod(web("new", "").Label("pod-template-hash", "v2"),
				withMatchLabelKeys(hard(zone, 1), "pod-template-hash")), "2a1b",
			"node01: fits; node02: fits; node03: fits; node04: fits"},
		{"pods of another namespace and pods being deleted do not count: zone a has 0 against zone b's 1",
			spreadPod(web("new", ""), hard(zone, 1)), "2a1b-foreign",
			"node01: fits; node02: fits; node03: " + skew + "; node04: " + skew},
		{"with two constraints a node must satisfy both: zone b fits by zone, and only its empty node by hostname",
			spreadPod(web("new", ""), hard(zone, 1), hard(host, 1)), "2a1b",
			"node01: " + skew + "; node02: " + skew + "; node03: " + skew + "; node04: fits"},
		{"an empty labelSelector counts no pod (as in Kubernetes), though the pod matches it itself",
			spreadPod(web("new", ""), corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: zone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{}}), "2a1b",
			"node01: fits; node02: fits; node03: fits; node04: fits"},
		{"a pod with only ScheduleAnyway constraints skips the filter",
			spreadPod(web("new", ""), soft(zone, 1)), "2a1b", "skip"},
		{"a pod without constraints skips the filter: the system defaults only score",
			web("new", "").Obj(), "2a1b", "skip"},
		{"a labelSelector that does not parse is an error",
			spreadPod(web("new", ""), corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: zone, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}}), "2a1b",
			`prefilter Error: obtaining pod's hard topology spread constraints: topology spread constraint topology.kubernetes.io/zone: "Near" is not a valid label selector operator`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes, pods := layout(tt.snap)
			if got := filterAll(tt.pod, snapshot(nodes, pods...)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// layout returns the nodes (twoZones, changed) and the app=web pods of a
// filter test:
//
//	2a1b          2 pods on node01 (zone a), 1 on node03 (zone b)
//	2a1b+bare     the same, and node05 without a zone label
//	2a1b-foreign  the same, but node01's are in namespace prod, or being deleted
//	1a1b          1 pod on node01, 1 on node03
//	ssd           node01-03 labelled disk=ssd; 1 pod on node01, 1 on node03, 3 on node04
//	tainted       node04 tainted dedicated=db:NoSchedule; 1 pod on node01, 2 on node04
func layout(name string) ([]*st.NodeWrapper, []*corev1.Pod) {
	nodes := twoZones()
	on := func(names ...string) []*corev1.Pod {
		var pods []*corev1.Pod
		for i, n := range names {
			pods = append(pods, web(fmt.Sprint("w", i), n).Obj())
		}
		return pods
	}
	switch name {
	case "2a1b":
		return nodes, on("node01", "node01", "node03")
	case "2a1b+bare":
		return append(nodes, st.MakeNode("node05")), on("node01", "node01", "node03")
	case "2a1b-foreign":
		return nodes, []*corev1.Pod{web("w1", "node01").Namespace("prod").Obj(), web("w2", "node01").Terminating().Obj(), web("w3", "node03").Obj()}
	case "1a1b":
		return nodes, on("node01", "node03")
	case "ssd":
		for _, n := range nodes[:3] {
			n.Label("disk", "ssd")
		}
		return nodes, on("node01", "node03", "node04", "node04", "node04")
	case "tainted":
		nodes[3].Taint("dedicated", "db", corev1.TaintEffectNoSchedule)
		return nodes, on("node01", "node04", "node04")
	}
	panic("no layout " + name)
}

// TestPreFilterExtensions: preemption takes pods off a clone of a node
// and the counts follow, on the clone's state only.
func TestPreFilterExtensions(t *testing.T) {
	const skew = "Unschedulable " + ErrReasonConstraintsNotMatch
	snap := snapshot(twoZones(), web("w1", "node01").Obj(), web("w2", "node01").Obj(), web("w3", "node03").Obj())
	pl, state, pi := New(testHandle), framework.NewCycleState(), framework.NewPodInfo(spreadPod(web("new", ""), hard(corev1.LabelTopologyZone, 1)))
	if s := pl.PreFilter(state, pi, snap); !s.IsSuccess() {
		t.Fatal(s.Message())
	}
	node01, _ := snap.Get("node01")
	victim := framework.NewPodInfo(web("w1", "node01").Obj())

	steps := []struct {
		name   string
		change func(state *framework.CycleState) *framework.Status
		want   string
	}{
		{"before any change zone a is over the skew", nil,
			"node01: " + skew + "; node02: " + skew + "; node03: fits; node04: fits"},
		{"removing one of zone a's pods brings it to 1 against 1: every node fits",
			func(s *framework.CycleState) *framework.Status { return pl.RemovePod(s, pi, victim, node01) },
			"node01: fits; node02: fits; node03: fits; node04: fits"},
		{"adding it back restores the skew",
			func(s *framework.CycleState) *framework.Status { return pl.AddPod(s, pi, victim, node01) },
			"node01: " + skew + "; node02: " + skew + "; node03: fits; node04: fits"},
		{"adding a pod of another app changes nothing",
			func(s *framework.CycleState) *framework.Status {
				return pl.AddPod(s, pi, framework.NewPodInfo(st.MakePod("db").Label("app", "db").NodeName("node01").Obj()), node01)
			},
			"node01: " + skew + "; node02: " + skew + "; node03: fits; node04: fits"},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if step.change != nil {
				clone := state.Clone()
				if s := step.change(clone); !s.IsSuccess() {
					t.Fatal(s.Message())
				}
				if got := filterNodes(pl, clone, pi, snap.List()); got != step.want {
					t.Errorf("clone: got  %s\nwant %s", got, step.want)
				}
				state = clone
			} else if got := filterNodes(pl, state, pi, snap.List()); got != step.want {
				t.Errorf("got  %s\nwant %s", got, step.want)
			}
		})
	}
	t.Run("a change on a clone leaves the original state alone", func(t *testing.T) {
		orig := framework.NewCycleState()
		pl.PreFilter(orig, pi, snap)
		clone := orig.Clone()
		pl.RemovePod(clone, pi, victim, node01)
		want := "node01: " + skew + "; node02: " + skew + "; node03: fits; node04: fits"
		if got := filterNodes(pl, orig, pi, snap.List()); got != want {
			t.Errorf("original: got  %s\nwant %s", got, want)
		}
	})
}
