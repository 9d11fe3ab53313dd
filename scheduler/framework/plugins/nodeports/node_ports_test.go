package nodeports

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestNodePortsFilter(t *testing.T) {
	node := func(pods ...*corev1.Pod) *framework.NodeInfo {
		return st.NodeInfo(st.MakeNode("node01").Obj(), pods...)
	}
	running := func(port int32, proto corev1.Protocol, ip string) *corev1.Pod {
		return st.MakePod("running").HostPort(port, proto, ip).NodeName("node01").Obj()
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *framework.NodeInfo
		want string
	}{
		{"a pod asking the host port another pod holds can't be scheduled onto that node",
			st.MakePod("p").HostPort(80, "", "").Obj(), node(running(80, "", "")), ErrReason},
		{"a pod asking another host port fits",
			st.MakePod("p").HostPort(8080, "", "").Obj(), node(running(80, "", "")), ""},
		{"the same port over UDP does not conflict with TCP",
			st.MakePod("p").HostPort(80, corev1.ProtocolUDP, "").Obj(), node(running(80, corev1.ProtocolTCP, "")), ""},
		{"an empty protocol means TCP, so it conflicts with an explicit TCP",
			st.MakePod("p").HostPort(80, "", "").Obj(), node(running(80, corev1.ProtocolTCP, "")), ErrReason},
		{"a port held on 0.0.0.0 conflicts with the same port wanted on one IP",
			st.MakePod("p").HostPort(80, "", "10.0.0.1").Obj(), node(running(80, "", "0.0.0.0")), ErrReason},
		{"a port wanted on 0.0.0.0 conflicts with the same port held on any one IP",
			st.MakePod("p").HostPort(80, "", "").Obj(), node(running(80, "", "10.0.0.2")), ErrReason},
		{"the same port on two different IPs does not conflict",
			st.MakePod("p").HostPort(80, "", "10.0.0.1").Obj(), node(running(80, "", "10.0.0.2")), ""},
		{"a pod without host ports fits any node",
			st.MakePod("p").Req("1", "").Obj(), node(running(80, "", "")), ""},
		{"a node without pods has every port free",
			st.MakePod("p").HostPort(80, "", "").Obj(), node(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, state, pi := New(), framework.NewCycleState(), framework.NewPodInfo(tt.pod)
			var got *framework.Status
			if s := pl.PreFilter(state, pi, nil); s.Code() != framework.Skip {
				got = pl.Filter(state, pi, tt.node)
			}
			if got.Message() != tt.want {
				t.Fatalf("got %q, want %q", got.Message(), tt.want)
			}
			if tt.want != "" && got.Code() != framework.Unschedulable {
				t.Errorf("code = %v, want Unschedulable (the port frees up when its pod goes)", got.Code())
			}
		})
	}
}

func TestPortsAreFreedWhenThePodLeavesTheNode(t *testing.T) {
	holder := framework.NewPodInfo(st.MakePod("holder").HostPort(80, "", "").NodeName("node01").Obj())
	ni := st.NodeInfo(st.MakeNode("node01").Obj())
	ni.AddPodInfo(holder)
	clone := ni.Clone()
	ni.RemovePod(holder.Key)
	pod := framework.NewPodInfo(st.MakePod("p").HostPort(80, "", "").Obj())
	if got := New().Filter(framework.NewCycleState(), pod, ni); !got.IsSuccess() {
		t.Errorf("port 80 still taken after its pod left: %q", got.Message())
	}
	if got := New().Filter(framework.NewCycleState(), pod, clone); got.IsSuccess() {
		t.Error("removing the pod changed a clone taken before")
	}
}
