package scheduler

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// TestSeedPolicies runs the examples of seed 000 (sections 二, 三 and 四)
// through the whole default profile: every filter, every score, weights
// and tie-breaking.
func TestSeedPolicies(t *testing.T) {
	node := func(name string) *st.NodeWrapper { return st.MakeNode(name).Allocatable("4", "8Gi") }
	infos := func(nodes ...*st.NodeWrapper) []*framework.NodeInfo {
		var out []*framework.NodeInfo
		for _, n := range nodes {
			out = append(out, st.NodeInfo(n.Obj()))
		}
		return out
	}
	appDemo := st.Selector("app", metav1.LabelSelectorOpIn, "myapp-demo")
	tainted := func(name string) *st.NodeWrapper {
		return node(name).Taint("key1", "value1", corev1.TaintEffectNoSchedule)
	}
	tests := []struct {
		name      string
		nodes     []*framework.NodeInfo
		pod       *corev1.Pod
		wantNodes []string // any of these; empty = fits nowhere
		wantErr   string
	}{
		{"三.3 hard node affinity: NotIn [liliang, scj] rejects node01 and node02, so only node03 fits",
			infos(node("node01").Label("myname", "liliang"), node("node02").Label("myname", "scj"), node("node03")),
			st.MakePod("affinity").RequiredNodeAffinity(st.Expr("myname", corev1.NodeSelectorOpNotIn, "liliang", "scj")).Obj(),
			[]string{"node03"}, ""},
		{"三.3 hard node affinity with every node labelled liliang or scj: Pending",
			infos(node("node01").Label("myname", "liliang"), node("node02").Label("myname", "scj")),
			st.MakePod("affinity").RequiredNodeAffinity(st.Expr("myname", corev1.NodeSelectorOpNotIn, "liliang", "scj")).Obj(),
			nil, "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."},
		{"三.3 soft node affinity: among equal nodes the weight-1 preference for node03 wins",
			infos(node("node01"), node("node02"), node("node03"), node("node04")),
			st.MakePod("affinity").Req("100m", "128Mi").PreferredNodeAffinity(1, st.Expr(corev1.LabelHostname, corev1.NodeSelectorOpIn, "node03")).Obj(),
			[]string{"node03"}, ""},
		{"三.3 soft node affinity never overrides the hard filters: node03 is full, so another node is chosen",
			[]*framework.NodeInfo{st.NodeInfo(node("node01").Obj()), st.NodeInfo(node("node03").Obj(), st.MakePod("big").Req("4", "").NodeName("node03").Obj())},
			st.MakePod("affinity").Req("1", "").PreferredNodeAffinity(1, st.Expr(corev1.LabelHostname, corev1.NodeSelectorOpIn, "node03")).Obj(),
			[]string{"node01"}, ""},
		{"二.3 BalancedResourceAllocation: node02 at cpu:memory 50:50 beats node01 at 20:60, although node01 is less used",
			[]*framework.NodeInfo{
				st.NodeInfo(st.MakeNode("node01").Allocatable("10", "10Gi").Obj(), st.MakePod("a").Req("1", "5Gi").NodeName("node01").Obj()),
				st.NodeInfo(st.MakeNode("node02").Allocatable("10", "10Gi").Obj(), st.MakePod("b").Req("4", "4Gi").NodeName("node02").Obj()),
			},
			st.MakePod("web").Req("1", "1Gi").Obj(), []string{"node02"}, ""},
		{"三.3 pod affinity on topologyKey myname: the pod lands in the domain of myapp-demo (myname=tan: node02 or node03)",
			[]*framework.NodeInfo{
				st.NodeInfo(node("node01").Label("myname", "scj").Obj()),
				st.NodeInfo(node("node02").Label("myname", "tan").Obj(), st.MakePod("myapp-demo").Label("app", "myapp-demo").NodeName("node02").Obj()),
				st.NodeInfo(node("node03").Label("myname", "tan").Obj()),
			},
			st.MakePod("myapp-demo7").PodAffinity("myname", appDemo, "default").Obj(), []string{"node02", "node03"}, ""},
		{"三.3 pod anti-affinity on topologyKey myclass: every node is in myapp-demo's domain, so the pod stays Pending",
			[]*framework.NodeInfo{
				st.NodeInfo(node("node01").Label("myclass", "a").Obj()),
				st.NodeInfo(node("node02").Label("myclass", "a").Obj(), st.MakePod("myapp-demo").Label("app", "myapp-demo").NodeName("node02").Obj()),
				st.NodeInfo(node("node03").Label("myclass", "a").Obj()),
			},
			st.MakePod("myapp-demo8").PodAntiAffinity("myclass", appDemo, "default").Obj(),
			nil, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."},
		{"四: every node tainted key1=value1:NoSchedule keeps a pod without tolerations Pending",
			infos(tainted("node01"), tainted("node02")),
			st.MakePod("myapp-demo6").Obj(),
			nil, "0/2 nodes are available: 2 node(s) had untolerated taint {key1: value1}."},
		{"四: every node tainted key1=value1:NoSchedule, and the pod tolerating key1=value1 schedules",
			infos(tainted("node01"), tainted("node02")),
			st.MakePod("myapp-demo8").Toleration("key1", corev1.TolerationOpEqual, "value1", corev1.TaintEffectNoSchedule).Obj(),
			[]string{"node01", "node02"}, ""},
		{"四: a toleration of node-role.kubernetes.io/master with Exists lands on the master, the only node it tolerates",
			infos(tainted("node01"), tainted("node02"), node("master").Taint("node-role.kubernetes.io/master", "", corev1.TaintEffectNoSchedule)),
			st.MakePod("myapp-demo6").Toleration("node-role.kubernetes.io/master", corev1.TolerationOpExists, "", corev1.TaintEffectNoSchedule).Obj(),
			[]string{"master"}, ""},
		{"四: a master tainted PreferNoSchedule is avoided while the nodes have room",
			infos(node("master").Taint("node-role.kubernetes.io/master", "", corev1.TaintEffectPreferNoSchedule), node("node01"), node("node02")),
			st.MakePod("web").Req("100m", "128Mi").Obj(), []string{"node01", "node02"}, ""},
		{"四: ... and used when it is the only node left",
			[]*framework.NodeInfo{
				st.NodeInfo(node("master").Taint("node-role.kubernetes.io/master", "", corev1.TaintEffectPreferNoSchedule).Obj()),
				st.NodeInfo(node("node01").Obj(), st.MakePod("big").Req("4", "").NodeName("node01").Obj()),
			},
			st.MakePod("web").Req("1", "128Mi").Obj(), []string{"master"}, ""},
		{"二.2 PodFitsHostPorts: the node whose hostPort 80 is taken is filtered out",
			[]*framework.NodeInfo{
				st.NodeInfo(node("node01").Obj(), st.MakePod("ingress").HostPort(80, "", "").NodeName("node01").Obj()),
				st.NodeInfo(node("node02").Obj()),
			},
			st.MakePod("web").HostPort(80, "", "").Obj(), []string{"node02"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := scheduleOnce(t, tt.nodes, tt.pod, tt.wantErr)
			if !ok {
				return
			}
			if !slices.Contains(tt.wantNodes, r.SuggestedHost) {
				t.Errorf("node = %s, want one of %v (%s)", r.SuggestedHost, tt.wantNodes, describeNodes(r, r.Diagnosis))
			}
		})
	}
}

// replicaSets is a framework.ReplicaSetLister over fixed ReplicaSets.
type replicaSets map[string]*appsv1.ReplicaSet // by namespace/name

func (r replicaSets) Get(namespace, name string) (*appsv1.ReplicaSet, bool) {
	rs, ok := r[namespace+"/"+name]
	return rs, ok
}

// TestSeedSelectorSpreadPriority: seed 003's SelectorSpreadPriority, now
// PodTopologySpread's system default constraints, which need the pod's
// ReplicaSet from its lister.
func TestSeedSelectorSpreadPriority(t *testing.T) {
	node := func(name string) *corev1.Node { return st.MakeNode(name).Allocatable("4", "8Gi").Obj() }
	s := newTestScheduler(t,
		st.NodeInfo(node("node01"), st.MakePod("web-a").Label("app", "web").OwnedBy("ReplicaSet", "web").NodeName("node01").Obj()),
		st.NodeInfo(node("node02"), st.MakePod("other").Req("100m", "128Mi").NodeName("node02").Obj()))
	fwk, err := plugins.NewDefaultFramework(framework.Handle{ReplicaSets: replicaSets{
		"default/web": {Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	s.framework = fwk
	r, err := s.schedulePod(framework.NewCycleState(), framework.NewPodInfo(st.MakePod("web-b").Label("app", "web").OwnedBy("ReplicaSet", "web").Obj()))
	if err != nil {
		t.Fatal(err)
	}
	if r.SuggestedHost != "node02" {
		t.Errorf("the next replica of web goes to %s, want node02, the node without one (%s)", r.SuggestedHost, describeNodes(r, r.Diagnosis))
	}
}
