package nodename

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestNodeNameFilter(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"a pod naming no node fits node01", st.MakePod("p").Obj(), ""},
		{"a pod naming node01 fits node01", st.MakePod("p").NodeName("node01").Obj(), ""},
		{"a pod naming node02 does not fit node01", st.MakePod("p").NodeName("node02").Obj(), ErrReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := New().Filter(framework.NewCycleState(), framework.NewPodInfo(tt.pod), st.NodeInfo(st.MakeNode("node01").Obj()))
			if got.Message() != tt.want {
				t.Fatalf("got %q, want %q", got.Message(), tt.want)
			}
		})
	}
}
