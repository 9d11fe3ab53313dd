package nodeunschedulable

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestNodeUnschedulableFilter(t *testing.T) {
	cordoned := st.MakeNode("node01").Unschedulable().Obj()
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want string
	}{
		{"a pod can't be scheduled onto a cordoned node",
			st.MakePod("p").Obj(), cordoned, ErrReasonUnschedulable},
		{"a pod can be scheduled onto a node that is not cordoned",
			st.MakePod("p").Obj(), st.MakeNode("node02").Obj(), ""},
		{"a pod tolerating node.kubernetes.io/unschedulable:NoSchedule can be scheduled onto a cordoned node",
			st.MakePod("p").Toleration(corev1.TaintNodeUnschedulable, corev1.TolerationOpExists, "", corev1.TaintEffectNoSchedule).Obj(), cordoned, ""},
		{"a pod tolerating every taint can be scheduled onto a cordoned node",
			st.MakePod("p").Toleration("", corev1.TolerationOpExists, "", "").Obj(), cordoned, ""},
		{"tolerating the unschedulable taint with NoExecute is not enough",
			st.MakePod("p").Toleration(corev1.TaintNodeUnschedulable, corev1.TolerationOpExists, "", corev1.TaintEffectNoExecute).Obj(), cordoned, ErrReasonUnschedulable},
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
