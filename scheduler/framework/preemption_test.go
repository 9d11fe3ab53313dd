package framework_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/scheduler/cache"
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestRunFilterPluginsWithNominatedPods(t *testing.T) {
	dbSelector := st.Selector("app", metav1.LabelSelectorOpIn, "db")
	nominatedDB := framework.NewPodInfo(st.MakePod("db").Label("app", "db").Priority(1000).Req("1", "").NominatedNodeName("node01").Obj())
	tests := []struct {
		name      string
		pod       *st.PodWrapper
		nominated []*framework.PodInfo
		wantFits  bool
		wantMsg   string
	}{
		{"without nominated pods the node is filtered as usual: 1 cpu is free",
			st.MakePod("web").Req("1", ""), nil, true, ""},
		{"a pod nominated to the node takes its room: the cpu a victim frees is not free for others",
			st.MakePod("web").Req("1", ""), []*framework.PodInfo{nominatedDB}, false, "Insufficient cpu"},
		{"a pod whose required affinity only a nominated pod satisfies does not fit: that pod is not there yet",
			st.MakePod("web").PodAffinity("kubernetes.io/hostname", dbSelector), []*framework.PodInfo{nominatedDB}, false,
			"node(s) didn't match pod affinity rules"},
		{"a nominated pod counts for the anti-affinity of the pod being filtered",
			st.MakePod("web").PodAntiAffinity("kubernetes.io/hostname", dbSelector), []*framework.PodInfo{nominatedDB}, false,
			"node(s) didn't match pod anti-affinity rules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fwk, err := plugins.NewDefaultFramework(framework.Handle{})
			if err != nil {
				t.Fatal(err)
			}
			node := st.NodeInfo(st.MakeNode("node01").Allocatable("2", "8Gi").Obj(), st.MakePod("low").Req("1", "").NodeName("node01").Obj())
			snapshot := cache.NewSnapshot(node)
			state, pod := framework.NewCycleState(), framework.NewPodInfo(tt.pod.Obj())
			if s := fwk.RunPreFilterPlugins(state, pod, snapshot); !s.IsSuccess() {
				t.Fatal(s.Message())
			}
			requested := node.Requested.MilliCPU
			s := fwk.RunFilterPluginsWithNominatedPods(state, pod, node, tt.nominated)
			if s.IsSuccess() != tt.wantFits || s.Message() != tt.wantMsg {
				t.Errorf("fits = %v %q, want %v %q", s.IsSuccess(), s.Message(), tt.wantFits, tt.wantMsg)
			}
			if node.Requested.MilliCPU != requested || len(node.Pods) != 1 {
				t.Errorf("the node itself was changed: %dm requested, %d pods", node.Requested.MilliCPU, len(node.Pods))
			}
		})
	}
}

// counter is StateData that preemption changes, so it must be cloned.
type counter struct{ n int }

func (c *counter) Clone() framework.StateData { return &counter{c.n} }

func TestCycleStateCloneCopiesOnlyWhatPluginsChange(t *testing.T) {
	state := framework.NewCycleState()
	shared := []string{"read only"}
	state.Write("counts", &counter{1})
	state.Write("ports", shared)
	clone := state.Clone()
	c, _ := framework.ReadAs[*counter](clone, "counts")
	c.n = 5
	if orig, _ := framework.ReadAs[*counter](state, "counts"); orig.n != 1 {
		t.Errorf("changing the clone's counter changed the original: %d", orig.n)
	}
	if ports, _ := framework.ReadAs[[]string](clone, "ports"); &ports[0] != &shared[0] {
		t.Error("data without Clone should be shared, not copied")
	}
}
