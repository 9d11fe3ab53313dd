package interpodaffinity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// TestAddPodAndRemovePodKeepTheCountsTrue takes a pod off its node, as
// preemption does, and checks Filter's verdict against a fresh PreFilter
// on the cluster without that pod; then puts it back.
func TestAddPodAndRemovePodKeepTheCountsTrue(t *testing.T) {
	demo := st.Selector("app", metav1.LabelSelectorOpIn, "myapp-demo")
	tests := []struct {
		name     string
		existing *corev1.Pod // on node01, taken off and put back
		pod      *corev1.Pod
		node     string
		// The verdict on node with existing there, and without it.
		withReason, withoutReason string
	}{
		{"taking off the pod the incoming anti-affinity repels lets it fit",
			st.MakePod("myapp-demo").Label("app", "myapp-demo").NodeName("node01").Obj(),
			st.MakePod("web").PodAntiAffinity("myname", demo).Obj(), "node03",
			ErrReasonAntiAffinityRulesNotMatch, ""},
		{"taking off a running pod whose anti-affinity repels the incoming pod lets it fit",
			st.MakePod("loner").PodAntiAffinity("myname", st.Selector("app", metav1.LabelSelectorOpIn, "web")).NodeName("node01").Obj(),
			st.MakePod("web").Label("app", "web").Obj(), "node03",
			ErrReasonExistingAntiAffinityRulesNotMatch, ""},
		{"taking off the only pod the incoming affinity wants leaves no pod anywhere: the first-pod exception applies to the pod that matches itself",
			st.MakePod("myapp-demo").Label("app", "myapp-demo").NodeName("node01").Obj(),
			st.MakePod("myapp-demo2").Label("app", "myapp-demo").PodAffinity("myname", demo).Obj(), "node02",
			ErrReasonAffinityRulesNotMatch, ""},
		{"taking off the only pod the incoming affinity wants makes the domain that had it unfit",
			st.MakePod("myapp-demo").Label("app", "myapp-demo").NodeName("node01").Obj(),
			st.MakePod("web").PodAffinity("myname", demo).Obj(), "node03",
			"", ErrReasonAffinityRulesNotMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := New(framework.Handle{Namespaces: testNamespaces})
			snap := snapshot(seedNodes(), tt.existing)
			pod := framework.NewPodInfo(tt.pod)
			verdict := func(state *framework.CycleState, node *framework.NodeInfo) string {
				return pl.Filter(state, pod, node).Message()
			}
			state := framework.NewCycleState()
			if s := pl.PreFilter(state, pod, snap); !s.IsSuccess() {
				t.Fatalf("prefilter: %s", s.Message())
			}
			target, _ := snap.Get(tt.node)
			if got := verdict(state, target); got != tt.withReason {
				t.Fatalf("with %s: %q, want %q", tt.existing.Name, got, tt.withReason)
			}
			// Take it off a clone of node01, as preemption does.
			node01, _ := snap.Get("node01")
			clone, cloneState := node01.Clone(), state.Clone()
			existing := clone.Pods[0]
			clone.RemovePod(existing.Key)
			if s := pl.RemovePod(cloneState, pod, existing, clone); !s.IsSuccess() {
				t.Fatal(s.Message())
			}
			if got := verdict(cloneState, target); got != tt.withoutReason {
				t.Errorf("without %s: %q, want %q", tt.existing.Name, got, tt.withoutReason)
			}
			if got := verdict(state, target); got != tt.withReason {
				t.Errorf("the original state changed: %q, want %q", got, tt.withReason)
			}
			clone.AddPodInfo(existing)
			if s := pl.AddPod(cloneState, pod, existing, clone); !s.IsSuccess() {
				t.Fatal(s.Message())
			}
			if got := verdict(cloneState, target); got != tt.withReason {
				t.Errorf("put back: %q, want %q", got, tt.withReason)
			}
		})
	}
}
