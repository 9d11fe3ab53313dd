package nodeaffinity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

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
			got := New().Filter(framework.NewPodInfo(tt.pod), st.NodeInfo(node01))
			if got.Message() != tt.want {
				t.Fatalf("got %q, want %q", got.Message(), tt.want)
			}
		})
	}
}
