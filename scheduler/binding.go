package scheduler

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/scheduler/explanation"
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/metrics"
)

// bindAsync is the binding cycle of kube-scheduler, on a goroutine of its
// own (see goAPI) so that the next pod is scheduled while this one's
// binding travels to the API server.
//
// Step 10: "Scheduler 调度完毕以后会更新 Pod 的信息 ... 将上面的 Pod 信息更新至
// API Server，由 APIServer 更新至 etcd 中". The scheduler does not PUT the pod: it
// POSTs a Binding to pods/NAME/binding, and the API server sets
// spec.nodeName (and PodScheduled=True) itself. Before it, the PreBind
// plugins write what must be there first: VolumeBinding gives the pod's
// claims their volumes and waits until they are bound. If that fails, the
// pod is unreserved, forgotten and retried after its backoff.
//
// The Binding carries the decision's explanation (package explanation) in
// its annotation mkube.io/scheduling-explanation, which the API server
// copies onto the pod. It is built here, on the binding goroutine, so the
// scheduling loop goes on to the next pod meanwhile; its one-line form is
// logged. The Scheduled event keeps Kubernetes' sentence.
//
// A pod that was nominated (it preempted) has its status.nominatedNodeName
// cleared once bound: the nomination has served (Kubernetes 1.34 lets the
// API server do this on binding; mkube's scheduler does it itself).
func (s *Scheduler) bindAsync(ctx context.Context, p *framework.QueuedPodInfo, assumedInfo *framework.PodInfo, state *framework.CycleState,
	r scheduleResult, wasNominated bool) {
	assumed := assumedInfo.Pod
	s.goAPI(ctx, func(ctx context.Context) {
		node := assumed.Spec.NodeName
		// PreBind: what must be in the API server before the Binding (the
		// claims' volumes, bound); it may wait.
		preBinding := s.clock.Now()
		st := s.framework.RunPreBindPlugins(ctx, state, assumedInfo, node)
		s.observePoint("PreBind", preBinding, st.Code().String())
		if !st.IsSuccess() {
			s.framework.RunUnreservePlugins(state, assumedInfo, node)
			s.forgetAssumed(p, assumed)
			s.metrics.Attempt(s.name, metrics.Error, s.clock.Since(r.began))
			if ctx.Err() == nil {
				// Retried after its backoff, with FailedScheduling.
				s.handleSchedulingFailure(ctx, p, st.AsError(), 0, framework.ClearNomination)
			}
			return
		}
		d := r.decision()
		d.Notes = state.Notes()
		e := explanation.New(d)
		if s.log.Enabled(ctx, slog.LevelInfo) {
			s.log.Info("scheduling explanation", seedstep.Key, seedstep.SchedulerPicksNode, "pod", p.Key, "why", e.Short())
		}
		annotation, err := e.Encode()
		if err != nil {
			s.log.Error("encode scheduling explanation", "pod", p.Key, "err", err) // bind without it
		}
		binding := s.clock.Now()
		err = s.bind(ctx, assumed, annotation)
		s.observePoint("Bind", binding, bindStatus(err))
		if err == nil {
			s.log.Info("bound pod to node", seedstep.Key, seedstep.BindingStored, "pod", p.Key, "node", node)
			s.metrics.Attempt(s.name, metrics.Scheduled, s.clock.Since(r.began))
			s.metrics.PodScheduled(p.Attempts)
			s.steps.Observe(seedstep.BindingStored, assumed.CreationTimestamp.Time)
			s.recorder.Event(assumed, corev1.EventTypeNormal, ReasonScheduled, "Successfully assigned %s to %s", p.Key, node)
			if wasNominated {
				s.clearNominatedNodeName(ctx, assumed)
			}
			return
		}
		s.framework.RunUnreservePlugins(state, assumedInfo, node)
		s.metrics.Attempt(s.name, metrics.Error, s.clock.Since(r.began))
		if ctx.Err() != nil {
			return // stopping: the next scheduler to start picks the pod up
		}
		s.handleBindingFailure(ctx, p, assumed, err)
	})
}

// bindStatus is the Bind extension point's status, as the DefaultBinder
// plugin's: Success, or Error.
func bindStatus(err error) string {
	if err != nil {
		return framework.Error.String()
	}
	return framework.Success.String()
}

// bind POSTs the Binding:
//
//	{"apiVersion":"v1","kind":"Binding",
//	 "metadata":{"name":"web-1","namespace":"default","uid":"...",
//	             "annotations":{"mkube.io/scheduling-explanation":"{...}"}},
//	 "target":{"kind":"Node","name":"node01"}}
//
// The uid, as kube-scheduler's DefaultBinder sends it, makes the API
// server refuse (409) to bind a different pod that has since taken the
// same name.
func (s *Scheduler) bind(ctx context.Context, pod *corev1.Pod, explained string) error {
	b := &corev1.Binding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: pod.Spec.NodeName},
	}
	if explained != "" {
		b.Annotations = map[string]string{explanation.AnnotationKey: explained}
	}
	return s.client.Post(ctx, client.Pods, pod.Namespace, pod.Name, "binding", b)
}

// handleBindingFailure undoes the assumption and decides the pod's fate:
//
//   - 409 Conflict (already bound by someone else, being deleted, or a new
//     pod with the same name) or 404 Not Found (deleted): there is nothing
//     left to schedule; the pod is dropped. The informer brings any
//     successor.
//   - any other error (the API server unreachable, say): the pod is
//     retried after its backoff, with a FailedScheduling event.
//
// Either way the room the pod was assumed to take is free again, which
// may let a waiting pod fit.
func (s *Scheduler) handleBindingFailure(ctx context.Context, p *framework.QueuedPodInfo, assumed *corev1.Pod, err error) {
	s.forgetAssumed(p, assumed)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		s.log.Info("binding rejected; not retrying", seedstep.Key, seedstep.BindingStored, "pod", p.Key, "node", assumed.Spec.NodeName, "err", err)
		return
	}
	s.handleSchedulingFailure(ctx, p, fmt.Errorf("binding rejected: %w", err), 0, framework.ClearNomination)
}

// forgetAssumed undoes the assumption of a pod whose binding cycle
// failed: the room it was assumed to take is free again, which may let a
// waiting pod fit.
func (s *Scheduler) forgetAssumed(p *framework.QueuedPodInfo, assumed *corev1.Pod) {
	if err := s.cache.ForgetPod(assumed); err != nil {
		s.log.Error("forget assumed pod", "pod", p.Key, "err", err)
	}
	s.moveOnEvent(framework.AssignedPodDelete)
}
