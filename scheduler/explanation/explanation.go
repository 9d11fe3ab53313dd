// Package explanation records why the scheduler put a pod where it did:
// for every node it evaluated, the filter that rejected it and why, or
// each score plugin's score, its weight and the node's total. No real
// cluster shows this; kube-scheduler only logs it at a high verbosity.
//
// The scheduler builds an Explanation per decision (New) and sends it,
// as JSON, in the annotation mkube.io/scheduling-explanation of the
// Binding it POSTs (step 10); the API server copies a Binding's
// annotations onto the pod. `mkube explain pod NAME` reads it back and
// prints it (WritePod):
//
//	Pod default/web-1 was scheduled to node03.
//	3 nodes in the cluster, 3 evaluated, 2 feasible. Each plugin scores 0-100; TOTAL = Σ score × weight.
//
//	NODE    VERDICT   TOTAL  TaintToleration×3  NodeAffinity×2  ...  REASON
//	node03  selected  580    100                100             ...
//	node02  feasible  380    100                0               ...
//	node01  rejected                                                 NodeAffinity: node(s) didn't match Pod's node affinity/selector
//
// The annotation stays small in any cluster: the MaxScoredNodes best
// nodes, the rejected nodes one by one only when there are at most
// MaxRejectedNodes of them, and every rejection counted by plugin and
// reason. Its JSON:
//
//	{"node":"node03","nodes":3,"evaluated":3,"feasible":2,
//	 "plugins":[{"name":"TaintToleration","weight":3},{"name":"NodeAffinity","weight":2},...],
//	 "scored":[{"name":"node03","scores":[100,100,...],"total":580},...],   scores[i] is plugins[i]'s, 0-100
//	 "rejected":[{"name":"node01","plugin":"NodeAffinity","reason":"node(s) didn't match ..."}],
//	 "reasons":[{"plugin":"NodeAffinity","reason":"node(s) didn't match ...","nodes":1}],
//	 "preemption":{"node":"node03","victims":[{"pod":"default/batch-1","priority":0}]},   only if the pod preempted
//	 "notes":[{"plugin":"VolumeBinding","text":"claim default/data: ..."}]}             only if a plugin reserved something
//
// A pod that preempted (seed 003) was first nominated to a node while its
// victims terminated; the explanation of its binding says which pods it
// evicted where. While it waits, `mkube explain pod` shows the node it is
// nominated to (status.nominatedNodeName).
//
// Where things live:
//
//	file            what it holds
//	explanation.go  the Explanation and what it records (nodes, scores, rejections, preemption, notes), its bounds and its annotation
//	print.go        WritePod and WriteTable: the table `mkube explain pod` prints
package explanation

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mkube/mkube/scheduler/framework"
)

// AnnotationKey is the Binding's (and so the pod's) annotation.
const AnnotationKey = "mkube.io/scheduling-explanation"

// Bounds on what an explanation lists one by one. Ten nodes is what a
// reader compares at a glance; beyond that the counts say enough, and an
// annotation stays far below the API's 256KiB limit on all of them.
const (
	MaxScoredNodes   = 10
	MaxRejectedNodes = 10
)

// Explanation is the record of one decision.
type Explanation struct {
	Node      string `json:"node"`      // the node chosen
	Nodes     int    `json:"nodes"`     // nodes in the cluster
	Evaluated int    `json:"evaluated"` // nodes filtered (fewer than Nodes in big clusters: percentageOfNodesToScore)
	Feasible  int    `json:"feasible"`  // nodes that passed every filter
	// Plugins are the score plugins that scored this pod, in order, with
	// their weights; empty when only one node was feasible (Kubernetes
	// does not score a single node).
	Plugins []Plugin `json:"plugins,omitempty"`
	// Scored are the best feasible nodes, best first (the chosen one
	// first of all), at most MaxScoredNodes.
	Scored []ScoredNode `json:"scored,omitempty"`
	// Rejected lists the rejected nodes in the order they were filtered,
	// when there are at most MaxRejectedNodes.
	Rejected []RejectedNode `json:"rejected,omitempty"`
	// Reasons counts every rejection by plugin and reason, most frequent
	// first.
	Reasons []ReasonCount `json:"reasons,omitempty"`
	// SkippedFilters and SkippedScores are the plugins that had nothing to
	// check or compare for this pod, and why.
	SkippedFilters []Skipped `json:"skippedFilters,omitempty"`
	SkippedScores  []Skipped `json:"skippedScores,omitempty"`
	// Preemption is what the pod evicted to make room, in an earlier
	// attempt; nil if it did not preempt.
	Preemption *Preemption `json:"preemption,omitempty"`
	// Notes are what plugins decided on the chosen node besides filtering
	// and scoring: the volume VolumeBinding gave each of the pod's claims.
	Notes []Note `json:"notes,omitempty"`
}

// Note is one plugin's decision, in words.
type Note struct {
	Plugin string `json:"plugin"`
	Text   string `json:"text"`
}

// Preemption is the node a pod preempted on and its victims, most
// important first.
type Preemption struct {
	Node    string   `json:"node"`
	Victims []Victim `json:"victims"`
}

// Victim is a pod deleted to make room, and its priority.
type Victim struct {
	Pod      string `json:"pod"` // namespace/name
	Priority int32  `json:"priority"`
}

// Skipped is a plugin that skipped the pod, and why.
type Skipped struct {
	Name   string `json:"name"`
	Reason string `json:"reason,omitempty"`
}

// Plugin is a score plugin and its weight.
type Plugin struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight"`
}

// ScoredNode is one feasible node's scores, in the order of Plugins.
type ScoredNode struct {
	Name   string  `json:"name"`
	Scores []int64 `json:"scores"`
	Total  int64   `json:"total"`
}

// RejectedNode is a node a filter rejected. A node with several reasons
// (Insufficient cpu, Insufficient memory) has them joined by ", ".
type RejectedNode struct {
	Name   string `json:"name"`
	Plugin string `json:"plugin"`
	Reason string `json:"reason"`
}

// ReasonCount is how many nodes were rejected by one plugin for one reason.
type ReasonCount struct {
	Plugin string `json:"plugin"`
	Reason string `json:"reason"`
	Nodes  int    `json:"nodes"`
}

// Decision is what a scheduling cycle found, as the scheduler hands it
// over.
type Decision struct {
	Node                          string
	Nodes, Evaluated, Feasible    int
	Plugins                       []framework.PluginWeight     // the score plugins that ran
	Scores                        []framework.NodePluginScores // nil when only one node was feasible
	Rejected                      []framework.NodeStatus
	SkippedFilters, SkippedScores []framework.SkippedPlugin
	Preempted                     *framework.Candidate // the pod's earlier preemption, if any
	Notes                         []framework.Note     // what Reserve plugins decided (VolumeBinding's volumes)
}

// New builds the explanation of d. It costs O(evaluated nodes) and is
// built off the scheduling loop, on the binding goroutine.
func New(d Decision) *Explanation {
	e := &Explanation{Node: d.Node, Nodes: d.Nodes, Evaluated: d.Evaluated, Feasible: d.Feasible}
	if len(d.Scores) > 0 {
		for _, p := range d.Plugins {
			e.Plugins = append(e.Plugins, Plugin(p))
		}
		for _, i := range best(d.Scores, d.Node, MaxScoredNodes) {
			ns := &d.Scores[i]
			e.Scored = append(e.Scored, ScoredNode{Name: ns.Name, Scores: ns.Scores, Total: ns.TotalScore})
		}
		for _, s := range d.SkippedScores {
			e.SkippedScores = append(e.SkippedScores, Skipped(s))
		}
	}
	for _, s := range d.SkippedFilters {
		e.SkippedFilters = append(e.SkippedFilters, Skipped(s))
	}
	if len(d.Rejected) <= MaxRejectedNodes {
		for _, ns := range d.Rejected {
			e.Rejected = append(e.Rejected, RejectedNode{ns.Node, ns.Status.Plugin(), ns.Status.Message()})
		}
	}
	e.Reasons = countReasons(d.Rejected)
	for _, n := range d.Notes {
		e.Notes = append(e.Notes, Note(n))
	}
	if c := d.Preempted; c != nil {
		e.Preemption = &Preemption{Node: c.Node}
		for _, v := range c.Victims {
			e.Preemption.Victims = append(e.Preemption.Victims, Victim{framework.PodKey(v), framework.PodPriority(v)})
		}
	}
	return e
}

// best returns the indexes of the k best nodes, best first: highest total,
// the chosen node first among equals, then by name. One pass, keeping a
// sorted list of at most k.
func best(scores []framework.NodePluginScores, chosen string, k int) []int {
	better := func(a, b int) bool {
		x, y := &scores[a], &scores[b]
		if x.TotalScore != y.TotalScore {
			return x.TotalScore > y.TotalScore
		}
		if (x.Name == chosen) != (y.Name == chosen) {
			return x.Name == chosen
		}
		return x.Name < y.Name
	}
	top := make([]int, 0, k+1)
	for i := range scores {
		if len(top) == k && !better(i, top[k-1]) {
			continue
		}
		pos, _ := slices.BinarySearchFunc(top, i, func(t, i int) int {
			if better(i, t) {
				return 1
			}
			return -1
		})
		top = slices.Insert(top, pos, i)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// countReasons counts rejections by plugin and reason. Most rejections
// share one *Status per plugin and reason (framework.Status.WithPlugin),
// so statuses are counted first, then expanded into their reasons.
func countReasons(rejected []framework.NodeStatus) []ReasonCount {
	if len(rejected) == 0 {
		return nil
	}
	byStatus := map[*framework.Status]int{}
	for _, ns := range rejected {
		byStatus[ns.Status]++
	}
	type key struct{ plugin, reason string }
	counts := map[key]int{}
	for st, n := range byStatus {
		for _, r := range st.Reasons() {
			counts[key{st.Plugin(), r}] += n
		}
	}
	out := make([]ReasonCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, ReasonCount{k.plugin, k.reason, n})
	}
	slices.SortFunc(out, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Nodes, a.Nodes), cmp.Compare(a.Plugin, b.Plugin), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

// unscored says why the chosen node has no scores.
func (e *Explanation) unscored() string {
	if e.Feasible > 1 {
		return "no score plugin is enabled: the first feasible node"
	}
	return "the only feasible node: not scored"
}

// Encode is the annotation's value.
func (e *Explanation) Encode() (string, error) {
	b, err := json.Marshal(e)
	return string(b), err
}

// Decode reads an annotation's value.
func Decode(s string) (*Explanation, error) {
	e := &Explanation{}
	if err := json.Unmarshal([]byte(s), e); err != nil {
		return nil, fmt.Errorf("decode %s: %w", AnnotationKey, err)
	}
	return e, nil
}

// Short is the explanation in one line, for the scheduler's log:
//
//	node03 580 = TaintToleration 100×3 + NodeAffinity 100×2 + ...; runner-up node02 380; rejected 1: NodeAffinity "node(s) didn't match ..." ×1
//
// and, for a pod that preempted, "; had preempted on node03: default/batch-1 (priority 0)".
func (e *Explanation) Short() string {
	var b strings.Builder
	if len(e.Scored) == 0 {
		fmt.Fprintf(&b, "%s: %s", e.Node, e.unscored())
	} else {
		top := e.Scored[0]
		fmt.Fprintf(&b, "%s %d =", top.Name, top.Total)
		for i, p := range e.Plugins {
			if i > 0 {
				b.WriteString(" +")
			}
			fmt.Fprintf(&b, " %s %d×%d", p.Name, top.Scores[i], p.Weight)
		}
		if len(e.Scored) > 1 {
			fmt.Fprintf(&b, "; runner-up %s %d", e.Scored[1].Name, e.Scored[1].Total)
		}
	}
	if rejected := e.Evaluated - e.Feasible; rejected > 0 {
		fmt.Fprintf(&b, "; rejected %d:", rejected)
		for i, r := range e.Reasons {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %q ×%d", r.Plugin, r.Reason, r.Nodes)
		}
	}
	if e.Preemption != nil {
		fmt.Fprintf(&b, "; had preempted on %s: %s", e.Preemption.Node, e.Preemption.victimList())
	}
	for _, n := range e.Notes {
		fmt.Fprintf(&b, "; %s: %s", n.Plugin, n.Text)
	}
	return b.String()
}

// victimList is "default/batch-1 (priority 0), default/batch-2 (priority 0)".
func (p *Preemption) victimList() string {
	parts := make([]string, len(p.Victims))
	for i, v := range p.Victims {
		parts[i] = fmt.Sprintf("%s (priority %d)", v.Pod, v.Priority)
	}
	return strings.Join(parts, ", ")
}
