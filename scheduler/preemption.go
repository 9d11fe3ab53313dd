package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/preemption"
)

// postFilter is Kubernetes' PostFilter extension point, with its one
// default plugin, DefaultPreemption (package framework/preemption), run
// for a pod that fits no node (seed 003, "Pod 优先级和抢占式调度"):
//
//  1. preemption looks for a node where evicting pods of lower priority
//     makes room, on the cycle's snapshot and state;
//  2. what it says completes the FitError's message, as in Kubernetes:
//     "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes
//     are available: 3 No preemption victims found for incoming pod..";
//     nothing when it found victims;
//  3. if it found victims, prepareCandidate evicts them.
//
// It returns what the failure handler does with the pod's nomination: set
// it to the chosen node, clear it (preemption cannot help), or leave it
// (the pod waits for the victims of an earlier preemption).
func (s *Scheduler) postFilter(ctx context.Context, state *framework.CycleState, p *framework.QueuedPodInfo, fitErr *framework.FitError) framework.NominatingInfo {
	if s.preemption == nil {
		return framework.NominatingInfo{} // disabled by the profile: no PostFilter runs
	}
	nominatedNode := s.queue.NominatedNodeName(p.Pod) // the status may not show our own nomination yet
	if nominatedNode == "" {
		nominatedNode = p.Pod.Status.NominatedNodeName
	}
	result, st := s.preemption.PostFilter(state, p.PodInfo, nominatedNode, fitErr.Diagnosis, s.snapshot, s.queue.NominatedPodsFor(p.Pod))
	victims := 0
	if result.Candidate != nil {
		victims = len(result.Candidate.Victims)
	}
	s.metrics.Preemption(victims)
	fitErr.Diagnosis.PostFilterMsg = st.Message()
	switch {
	case st.Code() == framework.Error:
		s.log.Error("preemption", seedstep.Key, seedstep.SchedulerPicksNode, "pod", p.Key, "err", st.Message())
		return framework.NominatingInfo{} // leave the nomination: the next attempt decides
	case result.Candidate == nil:
		return result.Nominating
	}
	c := result.Candidate
	p.Preempted = c
	s.log.Info("preempting pods", seedstep.Key, seedstep.SchedulerPicksNode, "pod", p.Key, "priority", p.Priority, "node", c.Node,
		"victims", describeVictims(c.Victims), "pdbViolations", c.NumPDBViolations)
	s.prepareCandidate(ctx, p.Pod, c)
	return result.Nominating
}

// describeVictims is "default/low (priority 0), default/batch (priority 0)".
func describeVictims(victims []*corev1.Pod) string {
	parts := make([]string, len(victims))
	for i, v := range victims {
		parts[i] = fmt.Sprintf("%s (priority %d)", framework.PodKey(v), framework.PodPriority(v))
	}
	return strings.Join(parts, ", ")
}

// prepareCandidate carries out a preemption (Kubernetes' prepareCandidate),
// off the scheduling loop, each victim on an API goroutine of its own:
//
//  1. mark the victim: condition DisruptionTarget=True, reason
//     PreemptionByScheduler (so that the preemptor, retried while its
//     victims terminate, waits for them instead of preempting more);
//  2. delete it gracefully, with its UID as precondition, so that a new pod
//     that took the same name meanwhile is never hit: the kubelet stops its
//     containers within terminationGracePeriodSeconds, then the pod is
//     gone, which frees the room and retries the preemptor;
//  3. record a Normal event on it, "Preempted by pod <uid> on node <node>".
//
// Pods of lower priority nominated to the same node lose their nomination
// at once: the room they waited for is taken. The preemptor's own
// nomination is written by the failure handler, with its PodScheduled
// condition, in one patch.
func (s *Scheduler) prepareCandidate(ctx context.Context, preemptor *corev1.Pod, c *framework.Candidate) {
	for _, victim := range c.Victims {
		s.goAPI(ctx, func(ctx context.Context) { s.preemptVictim(ctx, preemptor, victim, c.Node) })
	}
	prio := framework.PodPriority(preemptor)
	for _, pi := range s.queue.NominatedPodsForNode(c.Node) {
		if pi.Priority < prio {
			s.queue.DeleteNominatedPodIfExists(pi.Pod)
			s.log.Info("cleared nomination of a lower-priority pod", "pod", pi.Key, "node", c.Node, "preemptor", framework.PodKey(preemptor))
			s.goAPI(ctx, func(ctx context.Context) { s.clearNominatedNodeName(ctx, pi.Pod) })
		}
	}
}

// preemptVictim is steps 1-3 of prepareCandidate for one victim. A victim
// already gone (404) or replaced by a new pod of the same name (409 on the
// UID precondition) needs nothing more.
func (s *Scheduler) preemptVictim(ctx context.Context, preemptor, victim *corev1.Pod, node string) {
	key := framework.PodKey(victim)
	gone := func(err error) bool { return apierrors.IsNotFound(err) || apierrors.IsConflict(err) }
	cond := map[string]any{"type": corev1.DisruptionTarget, "status": corev1.ConditionTrue, "reason": corev1.PodReasonPreemptionByScheduler,
		"message": s.name + ": preempting to accommodate a higher priority pod", "lastTransitionTime": metav1.NewTime(s.clock.Now())}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{cond}}})
	if err == nil {
		err = s.client.Patch(ctx, client.Pods, victim.Namespace, victim.Name, types.StrategicMergePatchType, patch, nil, "status")
	}
	switch {
	case gone(err):
		s.log.Info("preemption victim already gone", "pod", key, "preemptor", framework.PodKey(preemptor))
		return
	case err != nil:
		s.log.Warn("mark preemption victim", "pod", key, "err", err) // not deleted: the preemptor retries later
		return
	}
	uid := victim.UID
	err = s.client.Delete(ctx, client.Pods, victim.Namespace, victim.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case gone(err):
		s.log.Info("preemption victim already gone", "pod", key, "preemptor", framework.PodKey(preemptor))
		return
	case err != nil:
		s.log.Warn("delete preemption victim", "pod", key, "err", err)
		return
	}
	s.log.Info("preempted pod", seedstep.Key, seedstep.SchedulerPicksNode, "pod", key, "preemptor", framework.PodKey(preemptor), "node", node)
	s.recorder.Event(victim, corev1.EventTypeNormal, ReasonPreempted, "Preempted by pod %v on node %v", preemptor.UID, node)
}

// clearNominatedNodeName removes status.nominatedNodeName from pod, with
// a JSON merge patch (null deletes a field). It is an API call: run it on
// an API goroutine.
func (s *Scheduler) clearNominatedNodeName(ctx context.Context, pod *corev1.Pod) {
	patch := []byte(`{"status":{"nominatedNodeName":null}}`)
	err := s.client.Patch(ctx, client.Pods, pod.Namespace, pod.Name, types.MergePatchType, patch, nil, "status")
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		s.log.Warn("clear nominatedNodeName", "pod", framework.PodKey(pod), "err", err)
	}
}

// pdbLister is preemption.PDBLister over the PodDisruptionBudget
// informer's cache.
type pdbLister struct{ cache *client.Cache }

var _ preemption.PDBLister = pdbLister{}

func (l pdbLister) List() []*policyv1.PodDisruptionBudget {
	objs := l.cache.List()
	out := make([]*policyv1.PodDisruptionBudget, len(objs))
	for i, o := range objs {
		out[i] = o.(*policyv1.PodDisruptionBudget)
	}
	return out
}
