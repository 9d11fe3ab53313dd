package framework

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ErrNoNodesAvailable: the cluster has no nodes at all. The message is
// Kubernetes'.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// NodeStatus is the verdict on one node that did not fit.
type NodeStatus struct {
	Node   string
	Status *Status
}

// Diagnosis records why the nodes of one cycle were rejected.
type Diagnosis struct {
	// NodeToStatus lists the rejected nodes, in the order they were
	// evaluated.
	NodeToStatus []NodeStatus
	// UnschedulablePlugins are the plugins that rejected at least one node.
	UnschedulablePlugins sets.Set[string]
	// PreFilterMsg is why a PreFilter rejected the pod before any node
	// was filtered ("pod has unbound immediate PersistentVolumeClaims");
	// every node then has that status too, but the message says it once.
	PreFilterMsg string
	// PostFilterMsg is what preemption (the PostFilter step) said about
	// the pod, "preemption: ..."; empty when it had nothing to say (it
	// found victims, or did not run).
	PostFilterMsg string
}

// Add records that node was rejected with st.
func (d *Diagnosis) Add(node string, st *Status) {
	d.NodeToStatus = append(d.NodeToStatus, NodeStatus{node, st})
	if d.UnschedulablePlugins == nil {
		d.UnschedulablePlugins = sets.New[string]()
	}
	if p := st.Plugin(); p != "" {
		d.UnschedulablePlugins.Insert(p)
	}
}

// FitError: the pod fits no node. Its message is Kubernetes' (FitError in
// kube-scheduler's framework/types.go): every reason of every node is
// counted, each count is written before its reason, and the
// "count reason" strings are sorted as strings:
//
//	0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu.
//
// Note the sort is of strings, so "10 Insufficient cpu" comes before
// "2 node(s) were unschedulable", exactly as in Kubernetes.
//
// A pod a PreFilter rejected fits no node for one reason, which is said
// once instead of counted per node (Diagnosis.PreFilterMsg):
//
//	0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: ...
//
// What preemption found (Diagnosis.PostFilterMsg) follows, as a sentence
// of its own: Kubernetes writes " %v." after the filters' part, and since
// preemption's own message already ends with a full stop, the real
// message ends with two:
//
//	0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..
type FitError struct {
	Pod         *corev1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis
}

func (f *FitError) Error() string {
	msg := fmt.Sprintf("0/%d nodes are available:", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		msg += " " + f.Diagnosis.PreFilterMsg + "."
	} else {
		msg += f.histogram()
	}
	if f.Diagnosis.PostFilterMsg != "" {
		msg += " " + f.Diagnosis.PostFilterMsg + "."
	}
	return msg
}

// histogram is " 1 node(s) were unschedulable, 2 Insufficient cpu.", or
// nothing when no node was rejected.
func (f *FitError) histogram() string {
	counts := map[string]int{}
	for _, ns := range f.Diagnosis.NodeToStatus {
		for _, r := range ns.Status.Reasons() {
			counts[r]++
		}
	}
	histogram := make([]string, 0, len(counts))
	for reason, n := range counts {
		histogram = append(histogram, fmt.Sprintf("%d %s", n, reason))
	}
	sort.Strings(histogram)
	if len(histogram) == 0 {
		return ""
	}
	return " " + strings.Join(histogram, ", ") + "."
}
