package cache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// assumed is pod with spec.nodeName set, as the scheduler assumes it.
func assumed(pod *corev1.Pod, node string) *framework.PodInfo {
	p := pod.DeepCopy()
	p.Spec.NodeName = node
	return framework.NewPodInfo(p)
}

func requested(t *testing.T, c *Cache, node string) framework.Resource {
	t.Helper()
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	ni, ok := s.Get(node)
	if !ok {
		t.Fatalf("node %s not in the snapshot", node)
	}
	return ni.Requested
}

func TestAssumedPodsCountAtOnceAndAreForgottenIfBindingFails(t *testing.T) {
	c := New()
	c.AddNode(st.MakeNode("node01").Allocatable("4", "8Gi").Obj())
	pod := st.MakePod("web-1").Req("1", "1Gi").Obj()

	a := assumed(pod, "node01")
	if err := c.AssumePod(a); err != nil {
		t.Fatal(err)
	}
	if r := requested(t, c, "node01"); r.MilliCPU != 1000 {
		t.Fatalf("requested cpu after assume = %dm, want 1000m", r.MilliCPU)
	}
	if !c.IsAssumedPod(pod) {
		t.Fatal("pod is not assumed")
	}
	if err := c.AssumePod(a); err == nil {
		t.Fatal("a pod was assumed twice")
	}
	if err := c.ForgetPod(a.Pod); err != nil {
		t.Fatal(err)
	}
	if r := requested(t, c, "node01"); r.MilliCPU != 0 {
		t.Fatalf("requested cpu after forget = %dm, want 0", r.MilliCPU)
	}
	if c.IsAssumedPod(pod) || c.PodCount() != 0 {
		t.Fatal("forgotten pod is still in the cache")
	}
	if err := c.ForgetPod(a.Pod); err == nil {
		t.Fatal("a pod was forgotten twice")
	}
}

func TestTheBoundPodFromTheInformerConfirmsTheAssumption(t *testing.T) {
	c := New()
	c.AddNode(st.MakeNode("node01").Allocatable("4", "8Gi").Obj())
	a := assumed(st.MakePod("web-1").Req("1", "1Gi").Obj(), "node01")
	if err := c.AssumePod(a); err != nil {
		t.Fatal(err)
	}
	bound := a.Pod.DeepCopy()
	bound.ResourceVersion = "42"
	if err := c.AddPod(bound); err != nil {
		t.Fatal(err)
	}
	if c.IsAssumedPod(bound) {
		t.Error("the pod is still only assumed")
	}
	if r := requested(t, c, "node01"); r.MilliCPU != 1000 {
		t.Errorf("requested cpu = %dm, want 1000m counted once", r.MilliCPU)
	}
	if err := c.ForgetPod(a.Pod); err == nil {
		t.Error("a confirmed pod could be forgotten")
	}
	if err := c.RemovePod(bound); err != nil || c.PodCount() != 0 {
		t.Errorf("RemovePod: %v, pods left %d", err, c.PodCount())
	}
}

func TestUpdatePodRecountsItsRequests(t *testing.T) {
	c := New()
	c.AddNode(st.MakeNode("node01").Allocatable("4", "8Gi").Obj())
	old := st.MakePod("web-1").Req("1", "1Gi").NodeName("node01").Obj()
	if err := c.AddPod(old); err != nil {
		t.Fatal(err)
	}
	cur := st.MakePod("web-1").Req("500m", "1Gi").NodeName("node01").Obj()
	if err := c.UpdatePod(old, cur); err != nil {
		t.Fatal(err)
	}
	if r := requested(t, c, "node01"); r.MilliCPU != 500 {
		t.Errorf("requested cpu = %dm, want 500m", r.MilliCPU)
	}
}

func TestPodsSeenBeforeTheirNodeCountOnceTheNodeArrives(t *testing.T) {
	c := New()
	if err := c.AddPod(st.MakePod("web-1").Req("1", "").NodeName("node01").Obj()); err != nil {
		t.Fatal(err)
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	if s.NumNodes() != 0 {
		t.Fatalf("a node known only from its pods is schedulable")
	}
	c.AddNode(st.MakeNode("node01").Allocatable("4", "8Gi").Obj())
	c.UpdateSnapshot(s)
	if ni, ok := s.Get("node01"); !ok || ni.Requested.MilliCPU != 1000 {
		t.Fatalf("node01 in snapshot: %v, want 1000m requested", ok)
	}
}

func TestSnapshotCopiesOnlyWhatChanged(t *testing.T) {
	c := New()
	for _, n := range []string{"node03", "node01", "node02"} {
		c.AddNode(st.MakeNode(n).Allocatable("4", "8Gi").Obj())
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	if names := nodeNames(s); names != "node01,node02,node03" {
		t.Fatalf("snapshot nodes = %s, want sorted by name", names)
	}
	n1, _ := s.Get("node01")
	n2, _ := s.Get("node02")

	// A pod is assumed on node02: only node02 is copied again.
	if err := c.AssumePod(assumed(st.MakePod("web-1").Req("1", "").Obj(), "node02")); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	if got, _ := s.Get("node01"); got != n1 {
		t.Error("node01 was copied although it did not change")
	}
	got2, _ := s.Get("node02")
	if got2 == n2 || got2.Requested.MilliCPU != 1000 || s.List()[1] != got2 {
		t.Error("node02's change is not in the snapshot")
	}
	if n2.Requested.MilliCPU != 0 {
		t.Error("the cache changed a NodeInfo a previous snapshot handed out")
	}

	// node03 is deleted; node04 joins.
	c.RemoveNode(st.MakeNode("node03").Obj())
	c.AddNode(st.MakeNode("node04").Obj())
	c.UpdateSnapshot(s)
	if names := nodeNames(s); names != "node01,node02,node04" {
		t.Errorf("snapshot nodes = %s", names)
	}
	// node02 is deleted while a pod still names it: it leaves the snapshot.
	c.RemoveNode(st.MakeNode("node02").Obj())
	c.UpdateSnapshot(s)
	if names := nodeNames(s); names != "node01,node04" {
		t.Errorf("snapshot nodes = %s", names)
	}
}

func nodeNames(s *Snapshot) string {
	out := ""
	for i, n := range s.List() {
		if i > 0 {
			out += ","
		}
		out += n.Node().Name
	}
	return out
}

func TestSnapshotListsTheNodesHoldingPodsWithAffinity(t *testing.T) {
	c := New()
	for _, n := range []string{"node01", "node02", "node03"} {
		c.AddNode(st.MakeNode(n).Obj())
	}
	anti := st.MakePod("db").PodAntiAffinity(corev1.LabelHostname, st.Selector("app", "In", "db")).NodeName("node02").Obj()
	preferred := st.MakePod("web").PodAffinityTerm(st.PreferredAffinity, 5, corev1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: st.Selector("app", "In", "db")}).NodeName("node03").Obj()
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	if len(s.HavePodsWithAffinityList()) != 0 {
		t.Fatal("nodes without pods are listed")
	}
	for _, p := range []*corev1.Pod{anti, preferred, st.MakePod("plain").NodeName("node01").Obj()} {
		if err := c.AddPod(p); err != nil {
			t.Fatal(err)
		}
	}
	c.UpdateSnapshot(s)
	if got := names(s.HavePodsWithAffinityList()); got != "node02,node03" {
		t.Errorf("with affinity: %s", got)
	}
	if got := names(s.HavePodsWithRequiredAntiAffinityList()); got != "node02" {
		t.Errorf("with required anti-affinity: %s", got)
	}
	if l := s.HavePodsWithAffinityList(); l[0] != s.List()[1] {
		t.Error("the list holds another NodeInfo than the snapshot's")
	}
	if err := c.RemovePod(anti); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	if got := names(s.HavePodsWithAffinityList()) + "|" + names(s.HavePodsWithRequiredAntiAffinityList()); got != "node03|" {
		t.Errorf("after the anti-affinity pod left: %s", got)
	}
}

func TestSnapshotCountsTheNodesHoldingEachImage(t *testing.T) {
	c := New()
	c.AddNode(st.MakeNode("node01").Image(100, "nginx:1.25", "docker.io/library/nginx:1.25").Obj())
	c.AddNode(st.MakeNode("node02").Image(100, "nginx:1.25").Image(50, "redis:7").Obj())
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	if s.NumNodesWithImage("nginx:1.25") != 2 || s.NumNodesWithImage("redis:7") != 1 || s.NumNodesWithImage("docker.io/library/nginx:1.25") != 1 {
		t.Fatalf("counts: nginx %d, redis %d", s.NumNodesWithImage("nginx:1.25"), s.NumNodesWithImage("redis:7"))
	}
	// A heartbeat with the same images changes no count.
	c.UpdateNode(nil, st.MakeNode("node02").Image(100, "nginx:1.25").Image(50, "redis:7").Obj())
	// node01's kubelet garbage-collects nginx; node02 goes away.
	c.UpdateNode(nil, st.MakeNode("node01").Obj())
	c.RemoveNode(st.MakeNode("node02").Obj())
	c.UpdateSnapshot(s)
	if s.NumNodesWithImage("nginx:1.25") != 0 || s.NumNodesWithImage("redis:7") != 0 {
		t.Errorf("counts after the changes: nginx %d, redis %d", s.NumNodesWithImage("nginx:1.25"), s.NumNodesWithImage("redis:7"))
	}
}

func names(nodes []*framework.NodeInfo) string {
	out := ""
	for i, n := range nodes {
		if i > 0 {
			out += ","
		}
		out += n.Node().Name
	}
	return out
}
