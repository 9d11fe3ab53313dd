package scheduler

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/scheduler/cache"
	"github.com/mkube/mkube/scheduler/explanation"
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins"
	"github.com/mkube/mkube/scheduler/framework/preemption"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
	"github.com/mkube/mkube/scheduler/queue"
)

// newTestScheduler is a scheduler reduced to its algorithm: the default
// plugins over a fixed snapshot, with a seeded random source.
func newTestScheduler(t testing.TB, nodes ...*framework.NodeInfo) *Scheduler {
	fwk, err := plugins.NewDefaultFramework(framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	return &Scheduler{
		framework:  fwk,
		queue:      queue.New(queue.Options{}),
		preemption: preemption.New(fwk, nil, rnd),
		snapshot:   cache.NewSnapshot(nodes...),
		rand:       rnd,
		log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		clock:      clock.RealClock{},
	}
}

func TestSchedulePod(t *testing.T) {
	node := func(name string) *st.NodeWrapper { return st.MakeNode(name).Allocatable("4", "8Gi") }
	tests := []struct {
		name     string
		nodes    []*framework.NodeInfo
		pod      *corev1.Pod
		wantNode string // "" = fits nowhere
		wantErr  string
	}{
		{"a pod fitting nowhere gets Kubernetes' message with the reasons counted and sorted",
			[]*framework.NodeInfo{
				st.NodeInfo(node("node01").Unschedulable().Obj()),
				st.NodeInfo(st.MakeNode("node02").Allocatable("1", "8Gi").Obj()),
				st.NodeInfo(st.MakeNode("node03").Allocatable("1500m", "8Gi").Obj()),
			},
			st.MakePod("web-1").Req("2", "1Gi").Obj(), "",
			"0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."},
		{"a cordoned node short of cpu counts only as unschedulable: filters stop at the first rejection",
			[]*framework.NodeInfo{st.NodeInfo(st.MakeNode("node01").Allocatable("1", "1Gi").Unschedulable().Obj())},
			st.MakePod("web-1").Req("2", "1Gi").Obj(), "",
			"0/1 nodes are available: 1 node(s) were unschedulable."},
		{"the pod goes to the node with the most room left (LeastRequestedPriority)",
			[]*framework.NodeInfo{
				st.NodeInfo(node("node01").Obj(), st.MakePod("a").Req("3", "6Gi").NodeName("node01").Obj()),
				st.NodeInfo(node("node02").Obj(), st.MakePod("b").Req("1", "1Gi").NodeName("node02").Obj()),
				st.NodeInfo(node("node03").Obj(), st.MakePod("c").Req("2", "2Gi").NodeName("node03").Obj()),
			},
			st.MakePod("web-1").Req("500m", "512Mi").Obj(), "node02", ""},
		{"a nodeSelector narrows the choice to the matching node (PodSelectorMatches)",
			[]*framework.NodeInfo{st.NodeInfo(node("node01").Obj()), st.NodeInfo(node("node02").Label("myname", "chen").Obj())},
			st.MakePod("web-1").NodeSelector("myname", "chen").Obj(), "node02", ""},
		{"a taint keeps the pod on the untainted node",
			[]*framework.NodeInfo{st.NodeInfo(node("node01").Taint("key1", "value1", corev1.TaintEffectNoSchedule).Obj()), st.NodeInfo(node("node02").Obj())},
			st.MakePod("web-1").Obj(), "node02", ""},
		{"every node tainted: the message names each taint",
			[]*framework.NodeInfo{
				st.NodeInfo(node("node01").Taint("key1", "value1", corev1.TaintEffectNoSchedule).Obj()),
				st.NodeInfo(node("node02").Taint("key1", "value1", corev1.TaintEffectNoSchedule).Obj()),
				st.NodeInfo(node("master").Taint("node-role.kubernetes.io/master", "", corev1.TaintEffectNoSchedule).Obj()),
			},
			st.MakePod("web-1").Obj(), "",
			"0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/master: }, 2 node(s) had untolerated taint {key1: value1}."},
		{"a pod naming a node is only placed there (PodFitsHost)",
			[]*framework.NodeInfo{st.NodeInfo(node("node01").Obj()), st.NodeInfo(node("node02").Obj())},
			st.MakePod("web-1").NodeName("node02").Obj(), "node02", ""},
		{"resources taken by pods already on the node count",
			[]*framework.NodeInfo{st.NodeInfo(node("node01").Obj(), st.MakePod("a").Req("3500m", "").NodeName("node01").Obj())},
			st.MakePod("web-1").Req("1", "").Obj(), "",
			"0/1 nodes are available: 1 Insufficient cpu."},
		{"a cluster without nodes says so",
			nil, st.MakePod("web-1").Obj(), "", "no nodes available to schedule pods"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := scheduleOnce(t, tt.nodes, tt.pod, tt.wantErr)
			if !ok {
				return
			}
			if r.SuggestedHost != tt.wantNode {
				t.Errorf("node = %s, want %s (%s)", r.SuggestedHost, tt.wantNode, describeNodes(r, r.Diagnosis))
			}
		})
	}
}

// scheduleOnce runs one scheduling cycle for pod over nodes. With wantErr
// it checks the cycle failed with exactly that error and returns false.
func scheduleOnce(t *testing.T, nodes []*framework.NodeInfo, pod *corev1.Pod, wantErr string) (scheduleResult, bool) {
	t.Helper()
	r, err := newTestScheduler(t, nodes...).schedulePod(framework.NewCycleState(), framework.NewPodInfo(pod))
	if wantErr != "" {
		if err == nil || err.Error() != wantErr {
			t.Fatalf("err = %v\nwant  %s", err, wantErr)
		}
		return r, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return r, true
}

func TestTiesAreBrokenAtRandom(t *testing.T) {
	var nodes []*framework.NodeInfo
	for i := range 3 {
		nodes = append(nodes, st.NodeInfo(st.MakeNode(fmt.Sprintf("node%02d", i+1)).Allocatable("4", "8Gi").Obj()))
	}
	s := newTestScheduler(t, nodes...)
	picks := map[string]int{}
	pod := framework.NewPodInfo(st.MakePod("web").Req("100m", "100Mi").Obj())
	for range 300 {
		r, err := s.schedulePod(framework.NewCycleState(), pod)
		if err != nil {
			t.Fatal(err)
		}
		picks[r.SuggestedHost]++
	}
	for _, n := range []string{"node01", "node02", "node03"} {
		if picks[n] < 70 || picks[n] > 130 {
			t.Errorf("equal nodes picked %v times: not fair", picks)
			break
		}
	}
}

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		name       string
		percentage int32
		nodes      int
		want       int
	}{
		{"a cluster under 100 nodes is searched in full", 0, 99, 99},
		{"100 nodes at the adaptive 49% still look at 100", 0, 100, 100},
		{"1000 nodes: 50 - 8 = 42%", 0, 1000, 420},
		{"5000 nodes: 50 - 40 = 10%", 0, 5000, 500},
		{"6000 nodes: the adaptive percentage bottoms out at 5%", 0, 6000, 300},
		{"an explicit 100% searches everything", 100, 5000, 5000},
		{"an explicit percentage never goes below 100 nodes", 1, 5000, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := numFeasibleNodesToFind(tt.percentage, tt.nodes); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEachCycleStartsWhereThePreviousStopped(t *testing.T) {
	var nodes []*framework.NodeInfo
	for i := range 1000 {
		nodes = append(nodes, st.NodeInfo(st.MakeNode(fmt.Sprintf("node%04d", i)).Allocatable("4", "8Gi").Obj()))
	}
	s := newTestScheduler(t, nodes...)
	pod := framework.NewPodInfo(st.MakePod("web").Obj())
	for cycle, wantStart := range []int{0, 420, 840, 260} {
		if s.nextStartNodeIndex != wantStart {
			t.Fatalf("cycle %d starts at node %d, want %d", cycle, s.nextStartNodeIndex, wantStart)
		}
		r, err := s.schedulePod(framework.NewCycleState(), pod)
		if err != nil {
			t.Fatal(err)
		}
		if r.EvaluatedNodes != 420 {
			t.Fatalf("evaluated %d nodes, want 420", r.EvaluatedNodes)
		}
	}
}

func TestNodeUpdateEvent(t *testing.T) {
	base := st.MakeNode("node01").Allocatable("4", "8Gi").Obj()
	tests := []struct {
		name   string
		change func(n *corev1.Node)
		want   framework.ActionType
	}{
		{"a heartbeat changes nothing the scheduler cares about", func(n *corev1.Node) { n.ResourceVersion = "2" }, 0},
		{"kubectl label is a label update", func(n *corev1.Node) { n.Labels["myname"] = "scj" }, framework.UpdateNodeLabel},
		{"kubectl taint is a taint update", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
		}, framework.UpdateNodeTaint},
		{"kubectl cordon counts as a taint update", func(n *corev1.Node) { n.Spec.Unschedulable = true }, framework.UpdateNodeTaint},
		{"more allocatable memory is an allocatable update", func(n *corev1.Node) {
			n.Status.Allocatable[corev1.ResourceMemory] = n.Status.Allocatable[corev1.ResourceCPU]
		}, framework.UpdateNodeAllocatable},
		{"a node turning NotReady is a condition update", func(n *corev1.Node) {
			n.Status.Conditions[0].Status = corev1.ConditionFalse
		}, framework.UpdateNodeCondition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := base.DeepCopy()
			tt.change(cur)
			if got := nodeUpdateEvent(base, cur).ActionType; got != tt.want {
				t.Errorf("action = %b, want %b", got, tt.want)
			}
		})
	}
}

func TestDescribeNodesIsOneLine(t *testing.T) {
	s := newTestScheduler(t,
		st.NodeInfo(st.MakeNode("node01").Allocatable("4", "8Gi").Obj()),
		st.NodeInfo(st.MakeNode("node02").Allocatable("1", "8Gi").Obj()),
		st.NodeInfo(st.MakeNode("node03").Allocatable("4", "8Gi").Unschedulable().Obj()),
		st.NodeInfo(st.MakeNode("node04").Allocatable("8", "16Gi").Obj()),
	)
	r, err := s.schedulePod(framework.NewCycleState(), framework.NewPodInfo(st.MakePod("web").Req("2", "1Gi").Obj()))
	if err != nil {
		t.Fatal(err)
	}
	want := "node01: fits, score 149; node04: fits, score 174; node02: Insufficient cpu; node03: node(s) were unschedulable"
	if got := describeNodes(r, r.Diagnosis); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestTruncateMessage(t *testing.T) {
	long := strings.Repeat("x", 2000)
	if got := truncateMessage(long); len(got) != maxMessageLength || !strings.HasSuffix(got, " ...") {
		t.Errorf("truncated to %d characters", len(got))
	}
	if got := truncateMessage("short"); got != "short" {
		t.Errorf("a short message was changed: %q", got)
	}
}

func TestFilterErrorsAbortTheCycle(t *testing.T) {
	s := newTestScheduler(t, st.NodeInfo(st.MakeNode("node01").Obj()))
	fwk, _ := framework.New(framework.PluginSpec{Plugin: brokenFilter{}})
	s.framework = fwk
	_, err := s.schedulePod(framework.NewCycleState(), framework.NewPodInfo(st.MakePod("web").Obj()))
	var fitErr *framework.FitError
	if err == nil || errors.As(err, &fitErr) {
		t.Fatalf("err = %v, want an error that is not a FitError", err)
	}
}

type brokenFilter struct{}

func (brokenFilter) Name() string { return "Broken" }
func (brokenFilter) Filter(*framework.CycleState, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	return framework.AsStatus(errors.New("boom"))
}

// BenchmarkSchedulingCycle is one Filter + Score pass of the default
// plugins over 5000 nodes with 20 pods each, as kube-scheduler's
// scheduler_perf measures. "adaptive" looks for 500 feasible nodes
// (percentageOfNodesToScore's default); "all nodes" filters and scores all
// 5000; "fits nowhere" filters all 5000 and builds the FitError; the
// "preemption" cases add the PostFilter step.
func BenchmarkSchedulingCycle(b *testing.B) {
	var nodes []*framework.NodeInfo
	for i := range 5000 {
		node := st.MakeNode(fmt.Sprintf("node%04d", i)).Allocatable("32", "128Gi").Label("zone", fmt.Sprint("zone-", i%3))
		if i%10 == 0 {
			node.Taint("dedicated", "infra", corev1.TaintEffectNoSchedule)
		}
		var pods []*corev1.Pod
		for j := range 20 {
			pods = append(pods, st.MakePod(fmt.Sprintf("p%d-%d", i, j)).Req("500m", "1Gi").NodeName(node.Name).Obj())
		}
		nodes = append(nodes, st.NodeInfo(node.Obj(), pods...))
	}
	fits := framework.NewPodInfo(st.MakePod("web").Req("1", "2Gi").NodeSelector("zone", "zone-1").Obj())
	tooBig := framework.NewPodInfo(st.MakePod("huge").Req("64", "2Gi").Obj())
	for _, bc := range []struct {
		name       string
		percentage int32
		pod        *framework.PodInfo
		wantErr    bool
	}{
		{"adaptive", 0, fits, false},
		{"all nodes", 100, fits, false},
		{"fits nowhere", 0, tooBig, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newTestScheduler(b, nodes...)
			s.percentageOfNodesToScore = bc.percentage
			b.ReportAllocs()
			for b.Loop() {
				r, err := s.schedulePod(framework.NewCycleState(), bc.pod)
				if (err != nil) != bc.wantErr {
					b.Fatal(err)
				}
				if !bc.wantErr && r.SuggestedHost == "" {
					b.Fatal("no node")
				}
				if bc.wantErr {
					_ = err.Error() // the FailedScheduling message is part of the cost
				}
			}
		})
	}
	// What preemption (PostFilter) adds to a cycle that fits nowhere, for a
	// pod of priority 1000 among pods of priority 0: "victims" wants 30 of
	// a node's 32 cpu, so every untainted node is a candidate with 16
	// victims, and the dry run stops after 450 of them (10%); "cannot
	// help" wants 64 cpu, which no eviction frees, so all 4500 are tried;
	// "no lower priority" is a pod of priority 0, like every other: the
	// common case without PriorityClasses.
	for _, bc := range []struct {
		name        string
		pod         *framework.PodInfo
		wantVictims bool
	}{
		{"fits nowhere, preemption finds victims", framework.NewPodInfo(st.MakePod("vip").Priority(1000).Req("30", "2Gi").Obj()), true},
		{"fits nowhere, preemption cannot help", framework.NewPodInfo(st.MakePod("huge").Priority(1000).Req("64", "2Gi").Obj()), false},
		{"fits nowhere, preemption finds no lower priority", tooBig, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newTestScheduler(b, nodes...)
			b.ReportAllocs()
			for b.Loop() {
				state := framework.NewCycleState()
				_, err := s.schedulePod(state, bc.pod)
				var fitErr *framework.FitError
				if !errors.As(err, &fitErr) {
					b.Fatal(err)
				}
				r, st := s.preemption.PostFilter(state, bc.pod, "", fitErr.Diagnosis, s.snapshot, nil)
				if (r.Candidate != nil) != bc.wantVictims || (bc.wantVictims && len(r.Candidate.Victims) != 16) {
					b.Fatalf("%+v %s", r, st.Message())
				}
			}
		})
	}
	// What the binding goroutine adds, off the scheduling loop: building and
	// encoding the explanation of an adaptive cycle.
	b.Run("adaptive, explanation", func(b *testing.B) {
		s := newTestScheduler(b, nodes...)
		r, err := s.schedulePod(framework.NewCycleState(), fits)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := explanation.New(r.decision()).Encode(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInterPodAffinityCycle is a cycle over 5000 nodes of 20 pods
// each, in 3 zones, where one pod in 20 has a required anti-affinity
// (app=db apart by hostname) and one in 20 a preferred affinity. The cost
// of inter-pod affinity is per cycle O(nodes + pods with terms), and
// O(pods) only for a pod with terms of its own, never O(pods × nodes).
func BenchmarkInterPodAffinityCycle(b *testing.B) {
	var nodes []*framework.NodeInfo
	dbApart := st.Selector("app", metav1.LabelSelectorOpIn, "db")
	for i := range 5000 {
		node := st.MakeNode(fmt.Sprintf("node%04d", i)).Allocatable("32", "128Gi").Zone(fmt.Sprint("zone-", i%3))
		var pods []*corev1.Pod
		for j := range 20 {
			p := st.MakePod(fmt.Sprintf("p%d-%d", i, j)).Req("500m", "1Gi").Label("app", fmt.Sprint("app-", j)).NodeName(node.Name)
			switch j {
			case 0:
				p.Label("app", "db").PodAntiAffinity(corev1.LabelHostname, dbApart)
			case 1:
				p.Label("app", "web").PodAffinityTerm(st.PreferredAffinity, 10, corev1.PodAffinityTerm{TopologyKey: corev1.LabelTopologyZone, LabelSelector: dbApart})
			}
			pods = append(pods, p.Obj())
		}
		nodes = append(nodes, st.NodeInfo(node.Obj(), pods...))
	}
	for _, bc := range []struct {
		name    string
		pod     *framework.PodInfo
		wantErr bool
	}{
		{"a pod without terms", framework.NewPodInfo(st.MakePod("api").Req("1", "2Gi").Label("app", "api").Obj()), false},
		{"a pod the existing anti-affinity repels everywhere", framework.NewPodInfo(st.MakePod("db-new").Req("1", "2Gi").Label("app", "db").Obj()), true},
		{"a pod with required anti-affinity and preferred affinity", framework.NewPodInfo(st.MakePod("cache").Req("1", "2Gi").
			PodAntiAffinity(corev1.LabelHostname, st.Selector("app", metav1.LabelSelectorOpIn, "app-7")).
			PodAffinityTerm(st.PreferredAffinity, 50, corev1.PodAffinityTerm{TopologyKey: corev1.LabelTopologyZone, LabelSelector: st.Selector("app", metav1.LabelSelectorOpIn, "web")}).Obj()), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newTestScheduler(b, nodes...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.schedulePod(framework.NewCycleState(), bc.pod); (err != nil) != bc.wantErr {
					b.Fatal(err)
				}
			}
		})
	}
}
