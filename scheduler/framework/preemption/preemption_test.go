package preemption

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/scheduler/cache"
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// pdbList is a fixed PDBLister.
type pdbList []*policyv1.PodDisruptionBudget

func (l pdbList) List() []*policyv1.PodDisruptionBudget { return l }

// pdb is a budget over app=<app> in default with disruptionsAllowed allowed.
func pdb(app string, allowed int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: metav1.NamespaceDefault},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

// runPreemption does what the scheduler does for pod on nodes: PreFilter
// and Filter with the default plugins (counting the nominated pods), and,
// since no node fits, Preempt with the cycle's state and diagnosis.
func runPreemption(t *testing.T, nodes []*framework.NodeInfo, pod *corev1.Pod, pdbs []*policyv1.PodDisruptionBudget,
	nominated framework.NominatedPods) (Result, *framework.Status) {
	t.Helper()
	fwk, err := plugins.NewDefaultFramework(framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	snapshot := cache.NewSnapshot(nodes...)
	state, pi := framework.NewCycleState(), framework.NewPodInfo(pod)
	var d framework.Diagnosis
	if s := fwk.RunPreFilterPlugins(state, pi, snapshot); !s.IsSuccess() {
		t.Fatalf("prefilter: %s", s.Message())
	}
	for _, n := range snapshot.List() {
		s := fwk.RunFilterPluginsWithNominatedPods(state, pi, n, nominated[n.Node().Name])
		if s.IsSuccess() {
			t.Fatalf("the pod fits %s: nothing to preempt", n.Node().Name)
		}
		d.Add(n.Node().Name, s)
	}
	ev := New(fwk, pdbList(pdbs), rand.New(rand.NewPCG(1, 2)))
	return ev.Preempt(state, pi, pod.Status.NominatedNodeName, d, snapshot, nominated)
}

func keys(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestPreempt(t *testing.T) {
	node := func(name, cpu string) *st.NodeWrapper { return st.MakeNode(name).Allocatable(cpu, "8Gi") }
	bound := func(name, node string, prio int32, cpu string) *st.PodWrapper {
		return st.MakePod(name).Priority(prio).Req(cpu, "").NodeName(node)
	}
	at := func(hour int) time.Time { return time.Date(2025, 1, 1, hour, 0, 0, 0, time.UTC) }
	high := func() *st.PodWrapper { return st.MakePod("high").Priority(1000).Req("800m", "") }
	batchApart := st.Selector("app", metav1.LabelSelectorOpIn, "batch")

	tests := []struct {
		name      string
		nodes     []*framework.NodeInfo
		pod       *corev1.Pod
		pdbs      []*policyv1.PodDisruptionBudget
		nominated framework.NominatedPods
		// On success: the node and its victims, most important first.
		wantNode       string
		wantVictims    []string
		wantViolations int
		// Otherwise: the status and what becomes of the nomination.
		wantCode       framework.Code
		wantMsg        string
		wantNominating framework.NominatingInfo
	}{
		{name: "the package's worked example: node01's victims have the lower top priority, 0 against node02's 5",
			nodes: []*framework.NodeInfo{
				st.NodeInfo(node("node01", "2").Obj(), bound("a", "node01", 10, "1").Obj(),
					bound("b", "node01", 0, "500m").StartTime(at(9)).Obj(), bound("c", "node01", 0, "500m").StartTime(at(10)).Obj()),
				st.NodeInfo(node("node02", "2").Obj(), bound("d", "node02", 5, "1500m").Obj(), bound("e", "node02", 200, "500m").Obj()),
			},
			pod: st.MakePod("p").Priority(100).Req("1", "").Obj(), wantNode: "node01", wantVictims: []string{"b", "c"}},
		{name: "a pod of higher priority evicts the lower-priority pod that fills the node",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "1").Obj(), bound("low", "node01", 0, "800m").Obj())},
			pod:   high().Obj(), wantNode: "node01", wantVictims: []string{"low"}},
		{name: "pods of equal or higher priority are never victims",
			nodes: []*framework.NodeInfo{
				st.NodeInfo(node("node01", "1").Obj(), bound("peer", "node01", 1000, "800m").Obj()),
				st.NodeInfo(node("node02", "1").Obj(), bound("boss", "node02", 5000, "800m").Obj()),
			},
			pod: high().Obj(), wantCode: framework.Unschedulable, wantNominating: framework.ClearNomination,
			wantMsg: "0/2 nodes are available: 2 No preemption victims found for incoming pod."},
		{name: "a node rejected for a taint, a selector or a cordon is not tried: evicting pods cannot fix those",
			nodes: []*framework.NodeInfo{
				st.NodeInfo(node("node01", "1").Taint("key1", "value1", corev1.TaintEffectNoSchedule).Obj(), bound("low", "node01", 0, "800m").Obj()),
				st.NodeInfo(node("node02", "1").Unschedulable().Obj(), bound("low2", "node02", 0, "800m").Obj()),
				st.NodeInfo(node("node03", "1").Obj(), bound("peer", "node03", 1000, "800m").Obj()),
			},
			pod: high().Obj(), wantCode: framework.Unschedulable, wantNominating: framework.ClearNomination,
			wantMsg: "0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."},
		{name: "a pod with preemptionPolicy Never does not preempt, and keeps any nomination",
			nodes:    []*framework.NodeInfo{st.NodeInfo(node("node01", "1").Obj(), bound("low", "node01", 0, "800m").Obj())},
			pod:      high().PreemptNever().Obj(),
			wantCode: framework.Unschedulable, wantMsg: "not eligible due to preemptionPolicy=Never."},
		{name: "a pod whose victims are still terminating on its nominated node waits for them instead of preempting more",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "1").Obj(),
				bound("low", "node01", 0, "800m").PreemptedByScheduler().Obj())},
			pod:      high().NominatedNodeName("node01").Obj(),
			wantCode: framework.Unschedulable, wantMsg: "not eligible due to a terminating pod on the nominated node."},
		{name: "the reprieve keeps the most important pods: of two equal-priority pods, the one started last goes",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "2").Obj(),
				bound("a", "node01", 10, "1").Obj(),
				bound("c", "node01", 5, "500m").StartTime(at(10)).Obj(),
				bound("b", "node01", 5, "500m").StartTime(at(9)).Obj())},
			pod:      st.MakePod("p").Priority(100).Req("500m", "").Obj(),
			wantNode: "node01", wantVictims: []string{"c"}},
		{name: "only as many pods as needed are evicted, least important first",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "2").Obj(),
				bound("a", "node01", 10, "1").Obj(),
				bound("b", "node01", 0, "500m").StartTime(at(9)).Obj(),
				bound("c", "node01", 0, "500m").StartTime(at(10)).Obj())},
			pod:      st.MakePod("p").Priority(100).Req("1", "").Obj(),
			wantNode: "node01", wantVictims: []string{"b", "c"}},
		{name: "a pod its budget protects is kept when another victim will do, even one of higher priority",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "2").Obj(),
				bound("a", "node01", 10, "1").Obj(),
				bound("b", "node01", 0, "500m").Label("app", "web").StartTime(at(9)).Obj(),
				bound("c", "node01", 0, "500m").StartTime(at(10)).Obj())},
			pod:      st.MakePod("p").Priority(100).Req("1", "").Obj(),
			pdbs:     []*policyv1.PodDisruptionBudget{pdb("web", 0)},
			wantNode: "node01", wantVictims: []string{"a"}},
		{name: "a budget that still allows a disruption protects nothing",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "2").Obj(),
				bound("a", "node01", 10, "1").Obj(),
				bound("b", "node01", 0, "500m").Label("app", "web").StartTime(at(9)).Obj(),
				bound("c", "node01", 0, "500m").StartTime(at(10)).Obj())},
			pod:      st.MakePod("p").Priority(100).Req("1", "").Obj(),
			pdbs:     []*policyv1.PodDisruptionBudget{pdb("web", 1)},
			wantNode: "node01", wantVictims: []string{"b", "c"}},
		{name: "when the budget cannot be honoured the pod is evicted anyway, and the violation counted",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "1").Obj(), bound("web", "node01", 0, "800m").Label("app", "web").Obj())},
			pod:   high().Obj(), pdbs: []*policyv1.PodDisruptionBudget{pdb("web", 0)},
			wantNode: "node01", wantVictims: []string{"web"}, wantViolations: 1},
		{name: "a node whose victims violate no budget wins over one where fewer, lower victims would",
			nodes: []*framework.NodeInfo{
				st.NodeInfo(node("node01", "1").Obj(), bound("web", "node01", 0, "800m").Label("app", "web").Obj()),
				st.NodeInfo(node("node02", "1").Obj(), bound("mid", "node02", 500, "800m").Obj()),
			},
			pod: high().Obj(), pdbs: []*policyv1.PodDisruptionBudget{pdb("web", 0)},
			wantNode: "node02", wantVictims: []string{"mid"}},
		{name: "the node whose most important victim has the lowest priority wins",
			nodes: []*framework.NodeInfo{
				st.NodeInfo(node("node01", "1").Obj(), bound("mid", "node01", 500, "800m").Obj()),
				st.NodeInfo(node("node02", "1").Obj(), bound("low", "node02", 0, "800m").Obj()),
				st.NodeInfo(node("node03", "1").Obj(), bound("mid2", "node03", 400, "800m").Obj()),
			},
			pod: high().Obj(), wantNode: "node02", wantVictims: []string{"low"}},
		{name: "a node full by pod count is a candidate: Too many pods is fixed by evicting one",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "4").AllocatableResource(corev1.ResourcePods, "1").Obj(),
				bound("low", "node01", 0, "100m").Obj())},
			pod: high().Obj(), wantNode: "node01", wantVictims: []string{"low"}},
		{name: "the pod holding the wanted host port is evicted",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "4").Obj(),
				st.MakePod("ingress").Priority(0).HostPort(80, "", "").NodeName("node01").Obj(),
				bound("other", "node01", 0, "100m").Obj())},
			pod:      st.MakePod("web").Priority(1000).HostPort(80, "", "").Obj(),
			wantNode: "node01", wantVictims: []string{"ingress"}},
		{name: "the pod the preemptor's required anti-affinity repels is evicted (InterPodAffinity's RemovePod updates its counts)",
			nodes: []*framework.NodeInfo{
				st.NodeInfo(node("node01", "4").Obj(), bound("batch", "node01", 0, "100m").Label("app", "batch").Obj(), bound("other", "node01", 0, "100m").Obj()),
				st.NodeInfo(node("node02", "4").Obj(), bound("batch-vip", "node02", 5000, "100m").Label("app", "batch").Obj()),
			},
			pod:      st.MakePod("web").Priority(1000).PodAntiAffinity(corev1.LabelHostname, batchApart).Obj(),
			wantNode: "node01", wantVictims: []string{"batch"}},
		{name: "a running pod whose anti-affinity repels the preemptor is evicted",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "4").Obj(),
				bound("loner", "node01", 0, "100m").PodAntiAffinity(corev1.LabelHostname, st.Selector("app", metav1.LabelSelectorOpIn, "web")).Obj())},
			pod:      st.MakePod("web").Priority(1000).Label("app", "web").Obj(),
			wantNode: "node01", wantVictims: []string{"loner"}},
		{name: "anti-affinity to a pod on another node of the zone is not fixed by evicting pods here",
			nodes: []*framework.NodeInfo{
				st.NodeInfo(node("node01", "4").Zone("a").Obj(), bound("batch", "node01", 5000, "100m").Label("app", "batch").Obj()),
				st.NodeInfo(node("node02", "4").Zone("a").Obj(), bound("low", "node02", 0, "100m").Obj()),
			},
			pod:      st.MakePod("web").Priority(1000).PodAntiAffinity(corev1.LabelTopologyZone, batchApart).Obj(),
			wantCode: framework.Unschedulable, wantNominating: framework.ClearNomination,
			wantMsg: "0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 node(s) didn't match pod anti-affinity rules."},
		{name: "a nominated pod of higher priority keeps its room: the preemptor must evict enough to fit beside it",
			nodes: []*framework.NodeInfo{st.NodeInfo(node("node01", "2").Obj(), bound("low", "node01", 0, "1").Obj())},
			pod:   st.MakePod("p").Priority(1000).Req("1", "").Obj(),
			nominated: framework.NominatedPods{"node01": {framework.NewPodInfo(
				st.MakePod("vip").Priority(2000).Req("1", "").NominatedNodeName("node01").Obj())}},
			wantNode: "node01", wantVictims: []string{"low"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, s := runPreemption(t, tt.nodes, tt.pod, tt.pdbs, tt.nominated)
			if tt.wantNode == "" {
				if s.Code() != tt.wantCode || s.Message() != tt.wantMsg {
					t.Fatalf("status = %s %q\nwant     %s %q", s.Code(), s.Message(), tt.wantCode, tt.wantMsg)
				}
				if r.Nominating != tt.wantNominating || r.Candidate != nil {
					t.Errorf("result = %+v, want nominating %+v and no candidate", r, tt.wantNominating)
				}
				return
			}
			if !s.IsSuccess() {
				t.Fatalf("status = %s %q, want success", s.Code(), s.Message())
			}
			c := r.Candidate
			if c.Node != tt.wantNode || !slices.Equal(keys(c.Victims), tt.wantVictims) || c.NumPDBViolations != tt.wantViolations {
				t.Errorf("chose %s, victims %v, %d violations; want %s, %v, %d", c.Node, keys(c.Victims), c.NumPDBViolations,
					tt.wantNode, tt.wantVictims, tt.wantViolations)
			}
			if r.Nominating != framework.Nominate(tt.wantNode) {
				t.Errorf("nominating = %+v, want %s", r.Nominating, tt.wantNode)
			}
		})
	}
}

func TestPostFilterPrefixesItsMessageAsKubernetesDoes(t *testing.T) {
	fwk, _ := plugins.NewDefaultFramework(framework.Handle{})
	ev := New(fwk, nil, nil)
	pod := framework.NewPodInfo(st.MakePod("p").Priority(10).PreemptNever().Obj())
	_, s := ev.PostFilter(framework.NewCycleState(), pod, "", framework.Diagnosis{}, cache.NewSnapshot(), nil)
	if want := "preemption: not eligible due to preemptionPolicy=Never."; s.Message() != want || s.Plugin() != Name {
		t.Errorf("status %q from %q, want %q from %s", s.Message(), s.Plugin(), want, Name)
	}
	fitErr := &framework.FitError{NumAllNodes: 1, Diagnosis: framework.Diagnosis{PostFilterMsg: s.Message()}}
	fitErr.Diagnosis.Add("node01", framework.NewStatus(framework.Unschedulable, "Insufficient cpu"))
	if want := "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.."; fitErr.Error() != want {
		t.Errorf("FailedScheduling message\n got  %q\n want %q", fitErr.Error(), want)
	}
}

func TestNumCandidates(t *testing.T) {
	tests := []struct {
		name      string
		potential int
		want      int
	}{
		{"a small cluster tries every potential node", 40, 40},
		{"300 potential nodes: at least 100 are tried", 300, 100},
		{"5000 potential nodes: 10% is 500", 5000, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := New(nil, nil, rand.New(rand.NewPCG(1, 2)))
			offset, got := ev.offsetAndNumCandidates(tt.potential)
			if got != tt.want || offset < 0 || offset >= tt.potential {
				t.Errorf("offset %d, num %d; want num %d and an offset in [0, %d)", offset, got, tt.want, tt.potential)
			}
		})
	}
}
