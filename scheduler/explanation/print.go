package explanation

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/podcondition"
)

// WritePod prints what is known of how pod was scheduled: the table of its
// explanation if the scheduler bound it, the FailedScheduling message of
// its PodScheduled condition if it is Pending, and the node it is
// nominated to if it preempted there.
func WritePod(w io.Writer, pod *corev1.Pod) error {
	key := pod.Namespace + "/" + pod.Name
	if pod.Spec.NodeName == "" {
		cond := podcondition.Get(pod, corev1.PodScheduled)
		var err error
		switch {
		case cond == nil:
			_, err = fmt.Fprintf(w, "Pod %s is Pending: the scheduler has not tried it yet.\n", key)
		case cond.Status == corev1.ConditionFalse:
			_, err = fmt.Fprintf(w, "Pod %s is Pending (%s):\n  %s\n", key, cond.Reason, cond.Message)
		default:
			_, err = fmt.Fprintf(w, "Pod %s is Pending.\n", key)
		}
		if err == nil && pod.Status.NominatedNodeName != "" {
			_, err = fmt.Fprintf(w, "It is nominated to %s: the scheduler preempted pods of lower priority there and waits for them to terminate.\n",
				pod.Status.NominatedNodeName)
		}
		return err
	}
	value, ok := pod.Annotations[AnnotationKey]
	if !ok {
		_, err := fmt.Fprintf(w, "Pod %s runs on %s; no explanation was recorded (created with spec.nodeName, or bound by another scheduler).\n", key, pod.Spec.NodeName)
		return err
	}
	e, err := Decode(value)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "Pod %s was scheduled to %s.\n", key, e.Node); err != nil {
		return err
	}
	if p := e.Preemption; p != nil {
		if _, err := fmt.Fprintf(w, "To make room it had preempted %d pod(s) on %s: %s.\n", len(p.Victims), p.Node, p.victimList()); err != nil {
			return err
		}
	}
	return e.WriteTable(w)
}

// WriteTable prints the explanation as a table: one row per node listed,
// the chosen node first, then the other feasible nodes by total, then the
// rejected ones; then what was left out, and the rejections counted by
// reason when the nodes are not listed one by one.
func (e *Explanation) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%d nodes in the cluster, %d evaluated, %d feasible.", e.Nodes, e.Evaluated, e.Feasible)
	if len(e.Plugins) > 0 {
		fmt.Fprint(w, " Each plugin scores 0-100; TOTAL = Σ score × weight.")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)

	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "NODE\tVERDICT\tTOTAL")
	for _, p := range e.Plugins {
		fmt.Fprintf(tw, "\t%s×%d", p.Name, p.Weight)
	}
	fmt.Fprint(tw, "\tREASON\n")
	empty := func() {
		for range e.Plugins {
			fmt.Fprint(tw, "\t")
		}
	}
	if len(e.Scored) == 0 {
		fmt.Fprintf(tw, "%s\tselected\t-", e.Node)
		empty()
		fmt.Fprintf(tw, "\t%s\n", e.unscored())
	}
	for _, n := range e.Scored {
		verdict := "feasible"
		if n.Name == e.Node {
			verdict = "selected"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d", n.Name, verdict, n.Total)
		for _, s := range n.Scores {
			fmt.Fprintf(tw, "\t%d", s)
		}
		fmt.Fprint(tw, "\t\n")
	}
	for _, r := range e.Rejected {
		fmt.Fprintf(tw, "%s\trejected\t", r.Name)
		empty()
		fmt.Fprintf(tw, "\t%s: %s\n", r.Plugin, r.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The empty cells of a short row leave blanks at its end: trim them.
	for line := range strings.Lines(table.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}

	if more := e.Feasible - max(len(e.Scored), 1); more > 0 {
		fmt.Fprintf(w, "... and %d more feasible nodes with lower totals.\n", more)
	}
	rejected := e.Evaluated - e.Feasible
	if rejected > len(e.Rejected) {
		fmt.Fprintf(w, "%d nodes rejected:\n", rejected)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, r := range e.Reasons {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", strconv.Itoa(r.Nodes), r.Plugin, r.Reason)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if e.Evaluated < e.Nodes {
		fmt.Fprintf(w, "%d nodes were not evaluated: the scheduler stops filtering once it has found enough feasible nodes (percentageOfNodesToScore).\n", e.Nodes-e.Evaluated)
	}
	if err := writeSkipped(w, "Filters with nothing to check for this pod:", e.SkippedFilters); err != nil {
		return err
	}
	if err := writeSkipped(w, "Scores with nothing to compare for this pod:", e.SkippedScores); err != nil {
		return err
	}
	return writeNotes(w, e.Notes)
}

// writeNotes prints what plugins reserved for the pod on its node:
//
//	Reserved for the pod on its node:
//	  VolumeBinding  claim default/data: provisioned on this node (volume.kubernetes.io/selected-node)
func writeNotes(w io.Writer, notes []Note) error {
	if len(notes) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nReserved for the pod on its node:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range notes {
		fmt.Fprintf(tw, "  %s\t%s\n", n.Plugin, n.Text)
	}
	return tw.Flush()
}

func writeSkipped(w io.Writer, title string, skipped []Skipped) error {
	if len(skipped) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range skipped {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.Reason)
	}
	return tw.Flush()
}
