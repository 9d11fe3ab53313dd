package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/scheduler/explanation"
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/metrics"
)

// Below minFeasibleNodesToFind nodes every node is evaluated, so small
// clusters always get the best node; above it, a cycle stops once it has
// found numFeasibleNodesToFind feasible nodes, which is never below 100
// nodes nor minFeasibleNodesPercentageToFind percent of the cluster.
// These are kube-scheduler's constants: scoring 500 of 5000 equivalent
// nodes finds almost as good a node at a tenth of the cost.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// scheduleResult is the outcome of one successful cycle.
type scheduleResult struct {
	SuggestedHost  string
	Score          int64
	NumNodes       int // in the snapshot
	EvaluatedNodes int // filtered, feasible or not
	FeasibleNodes  int
	Plugins        []framework.PluginWeight     // the score plugins that ran
	Scores         []framework.NodePluginScores // nil when only one node fit
	Diagnosis      framework.Diagnosis          // the nodes that did not fit
	// The plugins whose PreFilter or PreScore skipped this pod, and why.
	SkippedFilters, SkippedScores []framework.SkippedPlugin
	// Preempted is the preemption that made room for the pod in an
	// earlier attempt, if any.
	Preempted *framework.Candidate
	// began is when the attempt took the pod from the queue: the binding
	// cycle reports the attempt's duration from it.
	began time.Time
}

// decision is the result as the explanation package reads it.
func (r *scheduleResult) decision() explanation.Decision {
	return explanation.Decision{Node: r.SuggestedHost, Nodes: r.NumNodes, Evaluated: r.EvaluatedNodes, Feasible: r.FeasibleNodes,
		Plugins: r.Plugins, Scores: r.Scores, Rejected: r.Diagnosis.NodeToStatus,
		SkippedFilters: r.SkippedFilters, SkippedScores: r.SkippedScores, Preempted: r.Preempted}
}

// scheduleOne is one scheduling cycle: take the next pod, choose its node,
// assume it there and start binding. It returns false once the queue is
// closed.
func (s *Scheduler) scheduleOne(ctx context.Context) bool {
	pInfo, err := s.queue.Pop()
	if err != nil {
		return false
	}
	if s.skipPodSchedule(pInfo) {
		return true
	}
	// Step 9: the scheduler takes the unbound pod and looks for a node.
	s.log.Info("scheduling pod", seedstep.Key, seedstep.SchedulerPicksNode, "pod", pInfo.Key, "attempt", pInfo.Attempts)
	s.steps.Observe(seedstep.SchedulerPicksNode, pInfo.Pod.CreationTimestamp.Time)
	cycle := s.queue.SchedulingCycle()
	start := s.clock.Now()

	s.cache.UpdateSnapshot(s.snapshot)
	state := framework.NewCycleState()
	result, err := s.schedulePod(state, pInfo.PodInfo)
	if err != nil {
		// Fits nowhere: preemption may make room on some node (PostFilter);
		// either way FailedScheduling, and the pod waits in the queue.
		nominating := framework.ClearNomination // an error, or no nodes: Kubernetes clears it too
		var fitErr *framework.FitError
		if errors.As(err, &fitErr) {
			nominating = s.postFilter(ctx, state, pInfo, fitErr)
		}
		s.metrics.Attempt(s.name, attemptResult(err), s.clock.Since(start))
		s.handleSchedulingFailure(ctx, pInfo, err, cycle, nominating)
		return true
	}
	result.Preempted = pInfo.Preempted
	result.began = start
	s.logDecision(ctx, pInfo, result, start)

	// Assume: count the pod on its node now, so the next cycle sees the
	// room it takes (and its host ports, its affinity terms), although the
	// binding has not reached the API server.
	assumed := pInfo.Pod.DeepCopy()
	assumed.Spec.NodeName = result.SuggestedHost
	assumedInfo := *pInfo.PodInfo // the parsed terms are shared: they never change
	assumedInfo.Pod = assumed
	if err := s.cache.AssumePod(&assumedInfo); err != nil {
		// The cache already counts this pod: a bug, or a race with the
		// informer. Retried after its backoff.
		s.metrics.Attempt(s.name, metrics.Error, s.clock.Since(start))
		s.handleSchedulingFailure(ctx, pInfo, err, cycle, framework.ClearNomination)
		return true
	}
	// Reserve: what else the pod takes on that node (a static volume for
	// each claim) is its own from now on, in the plugins' memory.
	node, _ := s.snapshot.Get(result.SuggestedHost) // the snapshot has every node it chose from
	reserving := s.clock.Now()
	st := s.framework.RunReservePlugins(state, &assumedInfo, node)
	s.observePoint("Reserve", reserving, st.Code().String())
	if !st.IsSuccess() {
		s.framework.RunUnreservePlugins(state, &assumedInfo, result.SuggestedHost)
		if ferr := s.cache.ForgetPod(assumed); ferr != nil {
			s.log.Error("forget assumed pod", "pod", pInfo.Key, "err", ferr)
		}
		s.metrics.Attempt(s.name, metrics.Error, s.clock.Since(start))
		s.handleSchedulingFailure(ctx, pInfo, st.AsError(), cycle, framework.ClearNomination)
		return true
	}
	// A nominated pod now counts on its node as assumed: its nomination
	// ends here, and its status.nominatedNodeName once it is bound.
	wasNominated := s.queue.DeleteNominatedPodIfExists(pInfo.Pod) || pInfo.Pod.Status.NominatedNodeName != ""
	s.bindAsync(ctx, pInfo, &assumedInfo, state, result, wasNominated)
	return true
}

// observePoint records an extension point's run since began
// (scheduler_framework_extension_point_duration_seconds).
func (s *Scheduler) observePoint(point string, began time.Time, status string) {
	s.metrics.ExtensionPoint(s.name, point, status, s.clock.Since(began))
}

// attemptResult is how kube-scheduler labels a failed attempt: a pod that
// fits no node (or finds no node at all) is unschedulable, anything else
// an error.
func attemptResult(err error) string {
	var fitErr *framework.FitError
	if errors.As(err, &fitErr) || errors.Is(err, framework.ErrNoNodesAvailable) {
		return metrics.Unschedulable
	}
	return metrics.Error
}

// skipPodSchedule drops pods that must not be scheduled after all: being
// deleted, or already assumed (an update re-queued a pod whose binding is
// under way).
func (s *Scheduler) skipPodSchedule(p *framework.QueuedPodInfo) bool {
	if p.Pod.DeletionTimestamp != nil {
		s.log.Info("skipping pod being deleted", "pod", p.Key)
		return true
	}
	if s.cache.IsAssumedPod(p.Pod) {
		s.log.Debug("skipping assumed pod: its binding is under way", "pod", p.Key)
		return true
	}
	return false
}

// schedulePod runs the algorithm on the current snapshot: PreFilter,
// Filter, PreScore, Score, select, with state as the cycle's state (which
// preemption reads afterwards). It returns a *framework.FitError when no
// node fits, framework.ErrNoNodesAvailable when there are no nodes at all.
func (s *Scheduler) schedulePod(state *framework.CycleState, pod *framework.PodInfo) (scheduleResult, error) {
	nodes := s.snapshot.List()
	if len(nodes) == 0 {
		return scheduleResult{}, framework.ErrNoNodesAvailable
	}
	feasible, diagnosis, err := s.findNodesThatFitPod(state, pod, nodes)
	if err != nil {
		return scheduleResult{}, err
	}
	if len(feasible) == 0 {
		return scheduleResult{}, &framework.FitError{Pod: pod.Pod, NumAllNodes: len(nodes), Diagnosis: diagnosis}
	}
	result := scheduleResult{
		NumNodes:       len(nodes),
		EvaluatedNodes: len(feasible) + len(diagnosis.NodeToStatus),
		FeasibleNodes:  len(feasible),
		Diagnosis:      diagnosis,
		SkippedFilters: state.SkippedFilters(),
	}
	if len(feasible) == 1 || !s.framework.HasScorePlugins() {
		// Nothing to compare (Kubernetes skips scoring here too).
		result.SuggestedHost = feasible[0].Node().Name
		return result, nil
	}
	// Score (优选): each plugin prepares once, then rates every feasible node.
	began := s.clock.Now()
	st := s.framework.RunPreScorePlugins(state, pod, feasible, s.snapshot)
	s.observePoint("PreScore", began, st.Code().String())
	if !st.IsSuccess() {
		return scheduleResult{}, fmt.Errorf("running prescore %s: %w", st.Plugin(), st.AsError())
	}
	began = s.clock.Now()
	plugins, scores, st := s.framework.RunScorePlugins(state, pod, feasible)
	s.observePoint("Score", began, st.Code().String())
	if !st.IsSuccess() {
		return scheduleResult{}, fmt.Errorf("running score %s: %w", st.Plugin(), st.AsError())
	}
	result.Plugins, result.Scores, result.SkippedScores = plugins, scores, state.SkippedScores()
	result.SuggestedHost, result.Score = selectHost(scores, s.rand)
	return result, nil
}

// findNodesThatFitPod is the Filter phase (预选). PreFilter plugins first
// prepare, once, what their filters need (or reject the pod outright);
// then the filters run node by node, from where the previous cycle
// stopped, so that in a big cluster, where a cycle does not look at every
// node, every node gets its turn. On a node where pods of higher or equal
// priority are nominated (they preempted there and wait for their
// victims), the filters count them as if they were there already.
func (s *Scheduler) findNodesThatFitPod(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo) ([]*framework.NodeInfo, framework.Diagnosis, error) {
	var diagnosis framework.Diagnosis
	began := s.clock.Now()
	st := s.framework.RunPreFilterPlugins(state, pod, s.snapshot)
	s.observePoint("PreFilter", began, st.Code().String())
	if !st.IsSuccess() {
		if !st.IsRejected() {
			return nil, diagnosis, fmt.Errorf("running prefilter %s: %w", st.Plugin(), st.AsError())
		}
		// The pod fits no node at all: each node reports the reason, which
		// the message says once.
		for _, n := range nodes {
			diagnosis.Add(n.Node().Name, st)
		}
		diagnosis.PreFilterMsg = st.Message()
		return nil, diagnosis, nil
	}
	nominated := s.queue.NominatedPodsFor(pod.Pod) // nil, unless some pod preempted
	want := numFeasibleNodesToFind(s.percentageOfNodesToScore, len(nodes))
	feasible := make([]*framework.NodeInfo, 0, min(want, len(nodes)))
	processed := 0
	began = s.clock.Now()
	for i := 0; i < len(nodes) && len(feasible) < want; i++ {
		node := nodes[(s.nextStartNodeIndex+i)%len(nodes)]
		processed++
		var st *framework.Status
		if nominated == nil {
			st = s.framework.RunFilterPlugins(state, pod, node)
		} else {
			st = s.framework.RunFilterPluginsWithNominatedPods(state, pod, node, nominated[node.Node().Name])
		}
		switch {
		case st.IsSuccess():
			feasible = append(feasible, node)
		case st.IsRejected():
			diagnosis.Add(node.Node().Name, st)
		default:
			s.observePoint("Filter", began, framework.Error.String())
			return nil, diagnosis, fmt.Errorf("running filter %s on node %s: %w", st.Plugin(), node.Node().Name, st.AsError())
		}
	}
	if len(feasible) > 0 {
		s.observePoint("Filter", began, framework.Success.String())
	} else {
		s.observePoint("Filter", began, framework.Unschedulable.String())
	}
	s.nextStartNodeIndex = (s.nextStartNodeIndex + processed) % len(nodes)
	return feasible, diagnosis, nil
}

// numFeasibleNodesToFind is how many feasible nodes a cycle looks for
// before it stops filtering (kube-scheduler's rule):
//
//	nodes < 100             → all of them
//	percentage (0 = adaptive: 50 - nodes/125, at least 5) of the nodes,
//	but at least 100
//
// Example: 5000 nodes → 50 - 40 = 10% → 500 nodes.
func numFeasibleNodesToFind(percentage int32, numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	p := int(percentage)
	if p <= 0 {
		p = max(50-numAllNodes/125, minFeasibleNodesPercentageToFind)
	}
	if p >= 100 {
		return numAllNodes
	}
	return max(numAllNodes*p/100, minFeasibleNodesToFind)
}

// selectHost picks the node with the highest total score. When several
// share it, each is equally likely to be picked (reservoir sampling, as in
// kube-scheduler), so identical nodes fill up evenly rather than the first
// one by name taking every pod.
func selectHost(scores []framework.NodePluginScores, rnd *rand.Rand) (string, int64) {
	best, ties := scores[0], 1
	for _, ns := range scores[1:] {
		switch {
		case ns.TotalScore > best.TotalScore:
			best, ties = ns, 1
		case ns.TotalScore == best.TotalScore:
			ties++
			if rnd.IntN(ties) == 0 {
				best = ns // the i-th of i equal nodes replaces the pick with probability 1/i
			}
		}
	}
	return best.Name, best.TotalScore
}

// logDecision logs the cycle: every node's outcome in one line at Debug,
// the summary at Info.
func (s *Scheduler) logDecision(ctx context.Context, p *framework.QueuedPodInfo, r scheduleResult, start time.Time) {
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.Debug("filtered and scored nodes", seedstep.Key, seedstep.SchedulerPicksNode, "pod", p.Key, "nodes", describeNodes(r, r.Diagnosis))
	}
	attrs := []any{seedstep.Key, seedstep.SchedulerPicksNode, "pod", p.Key, "node", r.SuggestedHost}
	if r.Scores != nil {
		attrs = append(attrs, "score", r.Score) // no score when a single node fit: nothing to compare
	}
	attrs = append(attrs, "feasible", r.FeasibleNodes, "evaluated", r.EvaluatedNodes, "nodes", s.snapshot.NumNodes(),
		"took", s.clock.Since(start).Round(time.Microsecond))
	s.log.Info("selected node", attrs...)
}

// describeNodes is the one-line account of a cycle: "node01: fits, score
// 62; node02: Insufficient cpu".
func describeNodes(r scheduleResult, d framework.Diagnosis) string {
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
	}
	for _, ns := range r.Scores {
		sep()
		fmt.Fprintf(&b, "%s: fits, score %d", ns.Name, ns.TotalScore)
	}
	if r.Scores == nil && r.SuggestedHost != "" {
		sep()
		fmt.Fprintf(&b, "%s: fits", r.SuggestedHost)
	}
	for _, ns := range d.NodeToStatus {
		sep()
		fmt.Fprintf(&b, "%s: %s", ns.Node, ns.Status.Message())
	}
	return b.String()
}
