package explanation_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/scheduler/explanation"
	"github.com/mkube/mkube/scheduler/framework"
)

var (
	plugins      = []framework.PluginWeight{{Name: "TaintToleration", Weight: 3}, {Name: "NodeAffinity", Weight: 2}, {Name: "NodeResourcesFit", Weight: 1}}
	affinityMiss = framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector").WithPlugin("NodeAffinity")
)

// scored is one node's scores, its total computed from plugins' weights.
func scored(name string, scores ...int64) framework.NodePluginScores {
	ns := framework.NodePluginScores{Name: name, Scores: scores}
	for i, s := range scores {
		ns.TotalScore += s * plugins[i].Weight
	}
	return ns
}

// The seed's node affinity example as `mkube explain pod` prints it.
func ExampleWritePod() {
	e := explanation.New(explanation.Decision{
		Node: "node03", Nodes: 4, Evaluated: 4, Feasible: 2,
		Plugins:        plugins,
		Scores:         []framework.NodePluginScores{scored("node04", 100, 0, 90), scored("node03", 100, 100, 85)},
		Rejected:       []framework.NodeStatus{{Node: "node01", Status: affinityMiss}, {Node: "node02", Status: affinityMiss}},
		SkippedFilters: []framework.SkippedPlugin{{Name: "NodePorts", Reason: "the pod asks for no host port"}},
	})
	value, _ := e.Encode()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "affinity", Annotations: map[string]string{explanation.AnnotationKey: value}},
		Spec:       corev1.PodSpec{NodeName: "node03"},
	}
	if err := explanation.WritePod(os.Stdout, pod); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Pod default/affinity was scheduled to node03.
	// 4 nodes in the cluster, 4 evaluated, 2 feasible. Each plugin scores 0-100; TOTAL = Σ score × weight.
	//
	// NODE    VERDICT   TOTAL  TaintToleration×3  NodeAffinity×2  NodeResourcesFit×1  REASON
	// node03  selected  585    100                100             85
	// node04  feasible  390    100                0               90
	// node01  rejected                                                                NodeAffinity: node(s) didn't match Pod's node affinity/selector
	// node02  rejected                                                                NodeAffinity: node(s) didn't match Pod's node affinity/selector
	//
	// Filters with nothing to check for this pod:
	//   NodePorts  the pod asks for no host port
}

func TestWritePodOfAPendingPodPrintsItsFailedSchedulingMessage(t *testing.T) {
	msg := "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "myapp-demo8"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg}}},
	}
	var b strings.Builder
	if err := explanation.WritePod(&b, pod); err != nil {
		t.Fatal(err)
	}
	want := "Pod default/myapp-demo8 is Pending (Unschedulable):\n  " + msg + "\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
}

func TestWritePodOfAPodBoundWithoutTheScheduler(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "demo1"}, Spec: corev1.PodSpec{NodeName: "node01"}}
	var b strings.Builder
	explanation.WritePod(&b, pod)
	if !strings.Contains(b.String(), "runs on node01; no explanation was recorded") {
		t.Errorf("got %q", b.String())
	}
}

func TestAnExplanationStaysBoundedInABigCluster(t *testing.T) {
	d := explanation.Decision{Node: "n0042", Nodes: 5000, Evaluated: 1700, Feasible: 500, Plugins: plugins}
	for i := range 500 {
		d.Scores = append(d.Scores, scored(fmt.Sprintf("n%04d", i), 100, 0, int64(i%97)))
	}
	d.Scores[42] = scored("n0042", 100, 100, 96) // the best: chosen
	d.Scores[7] = scored("n0007", 100, 100, 96)  // tied with it
	insufficient := framework.NewStatus(framework.Unschedulable, "Insufficient cpu").WithPlugin("NodeResourcesFit")
	for i := range 1200 {
		st := affinityMiss
		if i%4 == 0 {
			st = insufficient
		}
		d.Rejected = append(d.Rejected, framework.NodeStatus{Node: fmt.Sprintf("r%04d", i), Status: st})
	}
	e := explanation.New(d)
	if len(e.Scored) != explanation.MaxScoredNodes || e.Scored[0].Name != "n0042" || e.Scored[1].Name != "n0007" {
		t.Fatalf("scored: %d nodes, first %s then %s; want 10, the chosen node first among equals", len(e.Scored), e.Scored[0].Name, e.Scored[1].Name)
	}
	for i := 1; i < len(e.Scored); i++ {
		if e.Scored[i].Total > e.Scored[i-1].Total {
			t.Fatalf("scored nodes not in order: %v", e.Scored)
		}
	}
	if e.Rejected != nil {
		t.Errorf("%d rejected nodes listed one by one; want only counts beyond %d", len(e.Rejected), explanation.MaxRejectedNodes)
	}
	want := []explanation.ReasonCount{
		{Plugin: "NodeAffinity", Reason: "node(s) didn't match Pod's node affinity/selector", Nodes: 900},
		{Plugin: "NodeResourcesFit", Reason: "Insufficient cpu", Nodes: 300},
	}
	if fmt.Sprint(e.Reasons) != fmt.Sprint(want) {
		t.Errorf("reasons = %v, want %v", e.Reasons, want)
	}
	value, _ := e.Encode()
	if len(value) > 2048 {
		t.Errorf("annotation is %d bytes", len(value))
	}
	var b strings.Builder
	e.WriteTable(&b)
	for _, line := range []string{
		"... and 490 more feasible nodes with lower totals.",
		"1200 nodes rejected:",
		"900  NodeAffinity      node(s) didn't match Pod's node affinity/selector",
		"3300 nodes were not evaluated",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, b.String())
		}
	}
}

func TestShortIsOneLine(t *testing.T) {
	e := explanation.New(explanation.Decision{
		Node: "node03", Nodes: 3, Evaluated: 3, Feasible: 2, Plugins: plugins,
		Scores:   []framework.NodePluginScores{scored("node02", 100, 0, 90), scored("node03", 100, 100, 85)},
		Rejected: []framework.NodeStatus{{Node: "node01", Status: affinityMiss}},
	})
	want := `node03 585 = TaintToleration 100×3 + NodeAffinity 100×2 + NodeResourcesFit 85×1; runner-up node02 390; ` +
		`rejected 1: NodeAffinity "node(s) didn't match Pod's node affinity/selector" ×1`
	if got := e.Short(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	single := explanation.New(explanation.Decision{Node: "master", Nodes: 1, Evaluated: 1, Feasible: 1})
	if got := single.Short(); got != "master: the only feasible node: not scored" {
		t.Errorf("got %s", got)
	}
}

func TestDecodeRoundTrips(t *testing.T) {
	e := explanation.New(explanation.Decision{Node: "node01", Nodes: 1, Evaluated: 1, Feasible: 1})
	value, err := e.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := explanation.Decode(value)
	if err != nil || back.Node != "node01" || back.Feasible != 1 {
		t.Errorf("decoded %+v, %v", back, err)
	}
	if _, err := explanation.Decode("{"); err == nil {
		t.Error("a broken annotation decoded")
	}
}

// Seed 003's preemption as `mkube explain pod` prints it: first while the
// pod waits on the node it is nominated to, then once it is bound there.
func TestWritePodOfAPodThatPreempted(t *testing.T) {
	low := int32(0)
	victim := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "low"}, Spec: corev1.PodSpec{Priority: &low}}
	e := explanation.New(explanation.Decision{Node: "node01", Nodes: 1, Evaluated: 1, Feasible: 1,
		Preempted: &framework.Candidate{Node: "node01", Victims: []*corev1.Pod{victim}}})
	value, _ := e.Encode()
	if !strings.Contains(value, `"preemption":{"node":"node01","victims":[{"pod":"default/low","priority":0}]}`) {
		t.Errorf("annotation = %s", value)
	}
	msg := "0/1 nodes are available: 1 Insufficient cpu."
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"while it waits for its victims, a Pending pod names the node it is nominated to",
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "high"},
				Status: corev1.PodStatus{Phase: corev1.PodPending, NominatedNodeName: "node01", Conditions: []corev1.PodCondition{
					{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg}}}},
			"Pod default/high is Pending (Unschedulable):\n  " + msg + "\n" +
				"It is nominated to node01: the scheduler preempted pods of lower priority there and waits for them to terminate.\n"},
		{"once bound, the pod says which pods it had evicted",
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "high", Annotations: map[string]string{explanation.AnnotationKey: value}},
				Spec: corev1.PodSpec{NodeName: "node01"}},
			"Pod default/high was scheduled to node01.\n" +
				"To make room it had preempted 1 pod(s) on node01: default/low (priority 0).\n" +
				"1 nodes in the cluster, 1 evaluated, 1 feasible.\n\n" +
				"NODE    VERDICT   TOTAL  REASON\n" +
				"node01  selected  -      the only feasible node: not scored\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := explanation.WritePod(&b, tt.pod); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
	if got, want := e.Short(), "node01: the only feasible node: not scored; had preempted on node01: default/low (priority 0)"; got != want {
		t.Errorf("short: %s\nwant   %s", got, want)
	}
}

// What VolumeBinding reserved, as `mkube explain pod` prints it after
// the table, and as the log's one line ends.
func TestTheNotesOfReservePluginsFollowTheTable(t *testing.T) {
	e := explanation.New(explanation.Decision{Node: "node01", Nodes: 2, Evaluated: 2, Feasible: 1,
		Rejected: []framework.NodeStatus{{Node: "node02", Status: framework.NewStatus(framework.UnschedulableAndUnresolvable,
			"node(s) had volume node affinity conflict").WithPlugin("VolumeBinding")}},
		Notes: []framework.Note{{Plugin: "VolumeBinding", Text: "claim default/data: bound to volume pv-node01"}}})
	var b strings.Builder
	if err := e.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	want := "2 nodes in the cluster, 2 evaluated, 1 feasible.\n\n" +
		"NODE    VERDICT   TOTAL  REASON\n" +
		"node01  selected  -      the only feasible node: not scored\n" +
		"node02  rejected         VolumeBinding: node(s) had volume node affinity conflict\n\n" +
		"Reserved for the pod on its node:\n" +
		"  VolumeBinding  claim default/data: bound to volume pv-node01\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := e.Short(); !strings.HasSuffix(got, "; VolumeBinding: claim default/data: bound to volume pv-node01") {
		t.Errorf("Short = %s", got)
	}
}
