package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/scheduler/framework"
)

// maxMessageLength is the longest event message Kubernetes stores
// (validation.NoteLengthLimit); a FailedScheduling message listing many
// distinct taints could exceed it.
const maxMessageLength = 1024

// handleSchedulingFailure is kube-scheduler's FailureHandler, for a pod
// that fits no node (a *FitError), a cluster without nodes, or an error:
//
//  1. put the pod back in the queue, as its latest version from the
//     informer: unschedulable (waits for a cluster event) when plugins
//     rejected it, backoffQ (waits a few seconds) after an error. A pod
//     that is gone, or was bound meanwhile, is not put back;
//  2. record its nomination (nominating, from preemption): the pod counts
//     on that node for pods of lower or equal priority from now on;
//  3. record a Warning FailedScheduling event with the message;
//  4. set the pod's condition PodScheduled=False, reason Unschedulable (or
//     SchedulerError), with the same message, and its
//     status.nominatedNodeName, unless they already say so.
//
// cycle is the scheduling cycle of the attempt (0 for a failed binding).
func (s *Scheduler) handleSchedulingFailure(ctx context.Context, p *framework.QueuedPodInfo, err error, cycle int64, nominating framework.NominatingInfo) {
	reason := corev1.PodReasonUnschedulable
	var fitErr *framework.FitError
	switch {
	case errors.As(err, &fitErr):
		p.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins
		if s.log.Enabled(ctx, slog.LevelDebug) {
			s.log.Debug("filtered nodes", seedstep.Key, seedstep.SchedulerPicksNode, "pod", p.Key, "nodes", describeNodes(scheduleResult{}, fitErr.Diagnosis))
		}
		s.log.Info("FailedScheduling", seedstep.Key, seedstep.SchedulerPicksNode, "pod", p.Key, "message", err.Error())
	case errors.Is(err, framework.ErrNoNodesAvailable):
		p.UnschedulablePlugins = nil // any node event may help
		s.log.Info("FailedScheduling", seedstep.Key, seedstep.SchedulerPicksNode, "pod", p.Key, "message", err.Error())
	default:
		reason = corev1.PodReasonSchedulerError
		s.log.Error("FailedScheduling", seedstep.Key, seedstep.SchedulerPicksNode, "pod", p.Key, "err", err)
	}

	pod := p.Pod
	obj, exists := s.podInformer.Cache().Get(p.Key)
	switch {
	case !exists:
		s.log.Info("pod no longer exists; not retrying", "pod", p.Key)
	case assigned(obj.(*corev1.Pod)):
		s.log.Info("pod was bound meanwhile; not retrying", "pod", p.Key, "node", obj.(*corev1.Pod).Spec.NodeName)
		exists = false // and its PodScheduled condition is not ours to change
	default:
		pod = obj.(*corev1.Pod)
		if pod != p.Pod {
			p.PodInfo = framework.NewPodInfo(pod)
		}
		var qerr error
		if reason == corev1.PodReasonSchedulerError {
			qerr = s.queue.AddBackoffIfNotPresent(p)
		} else {
			qerr = s.queue.AddUnschedulableIfNotPresent(p, cycle)
		}
		if qerr != nil {
			// Updated while we tried it: the newer version is queued already.
			s.log.Debug("not requeued", "pod", p.Key, "err", qerr)
		}
		s.queue.AddNominatedPod(p.PodInfo, nominating)
	}

	msg := truncateMessage(err.Error())
	s.recorder.Event(pod, corev1.EventTypeWarning, ReasonFailedScheduling, "%s", msg)
	if exists {
		s.updatePodStatus(ctx, pod, reason, msg, nominating)
	}
}

// updatePodStatus sets PodScheduled=False on the pod, and its
// status.nominatedNodeName if nominating changes it, with one strategic
// merge patch of pods/NAME/status that replaces only that condition
// (conditions merge by type) and that field (null removes it):
//
//	{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/1 nodes are available: ..."}],
//	           "nominatedNodeName":"node01"}}
//
// It is skipped when the pod already says the same, so a pod retried many
// times does not rewrite itself each time; lastTransitionTime changes only
// when the condition's status does (Kubernetes' updatePod).
func (s *Scheduler) updatePodStatus(ctx context.Context, pod *corev1.Pod, reason, msg string, nominating framework.NominatingInfo) {
	cur := podcondition.Get(pod, corev1.PodScheduled)
	condUnchanged := cur != nil && cur.Status == corev1.ConditionFalse && cur.Reason == reason && cur.Message == msg
	nnnChanges := nominating.Mode == framework.ModeOverride && pod.Status.NominatedNodeName != nominating.NominatedNodeName
	if condUnchanged && !nnnChanges {
		return
	}
	status := map[string]any{}
	if !condUnchanged {
		cond := map[string]any{"type": corev1.PodScheduled, "status": corev1.ConditionFalse, "reason": reason, "message": msg}
		if cur == nil || cur.Status != corev1.ConditionFalse {
			cond["lastTransitionTime"] = metav1.NewTime(s.clock.Now())
		}
		status["conditions"] = []any{cond}
	}
	if nnnChanges {
		status["nominatedNodeName"] = nil // removes it
		if nominating.NominatedNodeName != "" {
			status["nominatedNodeName"] = nominating.NominatedNodeName
		}
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		s.log.Error("encode status patch", "pod", framework.PodKey(pod), "err", err)
		return
	}
	ns, name := pod.Namespace, pod.Name
	s.goAPI(ctx, func(ctx context.Context) {
		err := s.client.Patch(ctx, client.Pods, ns, name, types.StrategicMergePatchType, patch, nil, "status")
		switch {
		case err == nil:
			s.log.Debug("set PodScheduled=False", "pod", ns+"/"+name, "reason", reason, "nominatedNodeName", nominating.NominatedNodeName)
		case apierrors.IsNotFound(err) || ctx.Err() != nil:
			// Deleted meanwhile, or we are stopping: nothing to report.
		default:
			s.log.Warn("update pod condition", "pod", ns+"/"+name, "err", err)
		}
	})
}

// truncateMessage keeps a message within maxMessageLength, as
// kube-scheduler does.
func truncateMessage(msg string) string {
	if len(msg) <= maxMessageLength {
		return msg
	}
	const suffix = " ..."
	return msg[:maxMessageLength-len(suffix)] + suffix
}
