package podtopologyspread

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// The expected scores are worked by hand from the formula of the package
// doc: raw = Σ count × log(domains + 2) + (maxSkew - 1), rounded; then
// 100 × (max + min - raw) / max.
func TestPodTopologySpreadScore(t *testing.T) {
	zone := corev1.LabelTopologyZone
	myApp := func(name, node string) *corev1.Pod {
		return st.MakePod(name).Label("app", "my-app").OwnedBy("ReplicaSet", "my-app").NodeName(node).Obj()
	}
	// OwnedBy writes apps/v1; a ReplicationController is v1.
	legacy := st.MakePod("legacy-2").Label("app", "legacy").OwnedBy("ReplicationController", "legacy").Obj()
	legacy.OwnerReferences[0].APIVersion = "v1"
	threeNodes := []*st.NodeWrapper{st.MakeNode("node01"), st.MakeNode("node02"), st.MakeNode("node03")}
	zoned := func() []*st.NodeWrapper {
		return []*st.NodeWrapper{st.MakeNode("node01").Zone("a"), st.MakeNode("node02").Zone("a"), st.MakeNode("node03").Zone("b")}
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		nodes    []*st.NodeWrapper
		pods     []*corev1.Pod
		feasible []string // all nodes if empty
		want     string
	}{
		{"seed 003 §十一.4.2, the package's worked example: a ReplicaSet's pod on node01 and no zones: by hostname only, 4, 2, 2 → 50, 100, 100",
			myApp("my-app-2", ""), threeNodes, []*corev1.Pod{myApp("my-app-1", "node01")}, nil,
			"node01 50, node02 100, node03 100"},
		{"with zones the zone counts too: raw 9, 7, 6 → node03, alone in zone b, scores best",
			// hostname log 5 = 1.61, zone log 4 = 1.39: node01 1.61+2 + 1.39+4 = 9.0;
			// node02 2 + 1.39+4 = 7.4; node03 2 + 4 = 6.
			myApp("my-app-2", ""), zoned(), []*corev1.Pod{myApp("my-app-1", "node01")}, nil,
			"node01 66, node02 88, node03 100"},
		{"under the system defaults a node without a zone is still spread by hostname, and counts as one more zone in the weight",
			// log 5 = 1.61 for both keys: node01 3×1.61+2 + 3×1.61+4 = 15.7 → 16 (15 with log 4);
			// node02 2 + 4 = 6; node03, no zone, 2.
			myApp("my-app-4", ""), []*st.NodeWrapper{st.MakeNode("node01").Zone("a"), st.MakeNode("node02").Zone("b"), st.MakeNode("node03")},
			[]*corev1.Pod{myApp("a", "node01"), myApp("b", "node01"), myApp("c", "node01")}, nil,
			"node01 12, node02 75, node03 100"},
		{"pods on nodes that are not feasible count for their zone: node02's 3 make zone a worse",
			// hostname log 4 = 1.39 over node01, node03; zone log 4: node01 2 + 3×1.39+4 = 10.2; node03 6.
			myApp("my-app-4", ""), zoned(), []*corev1.Pod{myApp("a", "node02"), myApp("b", "node02"), myApp("c", "node02")}, []string{"node01", "node03"},
			"node01 60, node03 100"},
		{"with no replica placed yet every node scores 100",
			myApp("my-app-1", ""), zoned(), nil, nil,
			"node01 100, node02 100, node03 100"},
		{"a Service's selector spreads bare pods: 2 on node01 of two nodes, raw 5 and 2 → 40, 100",
			// log 4 = 1.39: node01 2×1.39 + 2 = 4.8 → 5.
			st.MakePod("api-3").Label("app", "api").Obj(), threeNodes[:2],
			[]*corev1.Pod{st.MakePod("api-1").Label("app", "api").NodeName("node01").Obj(), st.MakePod("api-2").Label("app", "api").NodeName("node01").Obj()}, nil,
			"node01 40, node02 100"},
		{"a ReplicationController's selector spreads its pods",
			legacy, threeNodes,
			[]*corev1.Pod{st.MakePod("legacy-1").Label("app", "legacy").NodeName("node01").Obj()}, nil,
			"node01 50, node02 100, node03 100"},
		{"pods of other apps, other namespaces or being deleted do not count",
			myApp("my-app-2", ""), threeNodes,
			[]*corev1.Pod{web("w", "node01").Obj(), st.MakePod("x").Namespace("prod").Label("app", "my-app").NodeName("node02").Obj(),
				st.MakePod("y").Label("app", "my-app").Terminating().NodeName("node03").Obj()}, nil,
			"node01 100, node02 100, node03 100"},
		{"a bare pod that no Service selects is not spread", st.MakePod("bare").Label("app", "bare").Obj(), threeNodes, nil, nil, "skip"},
		{"a pod of a ReplicaSet the informer does not know (deleted) is not spread",
			st.MakePod("orphan").Label("app", "gone").OwnedBy("ReplicaSet", "gone").Obj(), threeNodes, nil, nil, "skip"},
		{"a Job's pod is not spread by default", st.MakePod("j").Label("app", "j").OwnedBy("Job", "backup").Obj(), threeNodes, nil, nil, "skip"},
		{"the pod's own ScheduleAnyway constraint replaces the defaults, and node03 without the zone key scores 0",
			// zone log 4: node01 1.39 → 1; node02 0.
			spreadPod(web("new", ""), soft(zone, 1)), []*st.NodeWrapper{st.MakeNode("node01").Zone("a"), st.MakeNode("node02").Zone("b"), st.MakeNode("node03")},
			[]*corev1.Pod{web("w1", "node01").Obj()}, nil,
			"node01 0, node02 100, node03 0"},
		{"a pod with only DoNotSchedule constraints gets no default soft ones: not scored",
			spreadPod(web("new", ""), hard(zone, 1)), zoned(), nil, nil, "skip"},
		{"nodeAffinityPolicy Honor: the pods on node02, which the pod's nodeSelector excludes, do not count for zone a",
			// hostname log 4 over node01, node03 (feasible); zone log 4: node01 2+4 = 6 and node03 1.39+2 + 1.39+4 = 8.8 → 9.
			st.MakePod("my-app-9").Label("app", "my-app").OwnedBy("ReplicaSet", "my-app").NodeSelector("disk", "ssd").Obj(),
			[]*st.NodeWrapper{st.MakeNode("node01").Zone("a").Label("disk", "ssd"), st.MakeNode("node02").Zone("a"), st.MakeNode("node03").Zone("b").Label("disk", "ssd")},
			[]*corev1.Pod{myApp("a", "node02"), myApp("b", "node02"), myApp("c", "node03")}, []string{"node01", "node03"},
			"node01 100, node03 66"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scoreAll(tt.pod, snapshot(tt.nodes, tt.pods...), tt.feasible...); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
