package framework_test

import (
	"testing"

	"github.com/mkube/mkube/scheduler/framework"
)

func TestFitErrorMessage(t *testing.T) {
	unschedulable := func() *framework.Status {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) were unschedulable").WithPlugin("NodeUnschedulable")
	}
	insufficient := func(reasons ...string) *framework.Status {
		return framework.NewStatus(framework.Unschedulable, reasons...).WithPlugin("NodeResourcesFit")
	}
	tests := []struct {
		name       string
		nodes      []framework.NodeStatus
		total      int
		postFilter string
		want       string
	}{
		{"one cordoned node and two short of cpu are counted per reason",
			[]framework.NodeStatus{{"node01", insufficient("Insufficient cpu")}, {"node02", unschedulable()}, {"node03", insufficient("Insufficient cpu")}}, 3, "",
			"0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."},
		{"a node short of cpu and memory counts for both reasons",
			[]framework.NodeStatus{{"node01", insufficient("Insufficient cpu", "Insufficient memory")}, {"node02", insufficient("Insufficient memory")}}, 2, "",
			"0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."},
		{"reasons are sorted as strings, so 10 comes before 2, as in Kubernetes",
			append(repeat(10, "n", insufficient("Insufficient cpu")), repeat(2, "m", unschedulable())...), 12, "",
			"0/12 nodes are available: 10 Insufficient cpu, 2 node(s) were unschedulable."},
		{"taints are reported with their key and value",
			[]framework.NodeStatus{{"node01", framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {key1: value1}")}}, 1, "",
			"0/1 nodes are available: 1 node(s) had untolerated taint {key1: value1}."},
		{"what preemption found follows as a sentence of its own, ending in two full stops as in Kubernetes",
			repeat(3, "n", insufficient("Insufficient cpu")), 3, "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
			"0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d framework.Diagnosis
			for _, ns := range tt.nodes {
				d.Add(ns.Node, ns.Status)
			}
			d.PostFilterMsg = tt.postFilter
			err := &framework.FitError{NumAllNodes: tt.total, Diagnosis: d}
			if got := err.Error(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDiagnosisRecordsTheRejectingPlugins(t *testing.T) {
	var d framework.Diagnosis
	d.Add("a", framework.NewStatus(framework.Unschedulable, "Insufficient cpu").WithPlugin("NodeResourcesFit"))
	d.Add("b", framework.NewStatus(framework.UnschedulableAndUnresolvable, "x").WithPlugin("TaintToleration"))
	d.Add("c", framework.NewStatus(framework.Unschedulable, "Insufficient memory").WithPlugin("NodeResourcesFit"))
	if got := d.UnschedulablePlugins.UnsortedList(); len(got) != 2 || !d.UnschedulablePlugins.HasAll("NodeResourcesFit", "TaintToleration") {
		t.Errorf("UnschedulablePlugins = %v", got)
	}
}

func repeat(n int, prefix string, st *framework.Status) []framework.NodeStatus {
	out := make([]framework.NodeStatus, n)
	for i := range out {
		out[i] = framework.NodeStatus{Node: prefix + string(rune('a'+i)), Status: st}
	}
	return out
}

// A pod a PreFilter rejected: every node has the status, but the message
// says the reason once, as Kubernetes' FitError does.
func TestAPreFilterRejectionIsSaidOnce(t *testing.T) {
	var d framework.Diagnosis
	notFound := framework.NewStatus(framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "data" not found`).WithPlugin("VolumeRestrictions")
	for _, n := range []string{"node01", "node02"} {
		d.Add(n, notFound)
	}
	d.PreFilterMsg = notFound.Message()
	d.PostFilterMsg = "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
	want := `0/2 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..`
	if got := (&framework.FitError{NumAllNodes: 2, Diagnosis: d}).Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
