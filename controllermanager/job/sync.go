package job

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
)

// syncContext is what one sync of a Job knows and decides.
type syncContext struct {
	key  string
	job  *batchv1.Job  // a private copy; its status is what sync writes
	pods []*corev1.Pod // claimed pods, from the cache
	// activePods run or will run; ready and terminating are counted for
	// status.ready and status.terminating.
	activePods  []*corev1.Pod
	ready       int32
	terminating int32
	// succeeded and failed count the pods that ended, including those
	// not yet in the status counters.
	succeeded, failed int32
	// finishedCondition is how the Job ends, once decided: first the
	// interim SuccessCriteriaMet or FailureTarget, then Complete or Failed.
	finishedCondition *batchv1.JobCondition
	// Indexed Jobs: the indexes that had succeeded before this sync, all
	// that have succeeded, and (with backoffLimitPerIndex) those that
	// failed for good.
	prevSucceededIndexes, succeededIndexes orderedIntervals
	failedIndexes                          *orderedIntervals
	// podsWithDelayedDeletionPerIndex: see podsWithDelayedDeletionPerIndex.
	podsWithDelayedDeletionPerIndex map[int]*corev1.Pod
	uncounted                       uncounted
	expectedRmFinalizers            map[types.UID]bool
	newBackoffRecord                backoffRecord
}

// uncounted are the pods in status.uncountedTerminatedPods: counted as
// ended, their finalizer perhaps not removed yet, not in the counters yet.
type uncounted struct{ succeeded, failed map[types.UID]bool }

func newUncounted(u *batchv1.UncountedTerminatedPods) uncounted {
	out := uncounted{succeeded: map[types.UID]bool{}, failed: map[types.UID]bool{}}
	for _, uid := range u.Succeeded {
		out.succeeded[uid] = true
	}
	for _, uid := range u.Failed {
		out.failed[uid] = true
	}
	return out
}

// sync brings the Job one step closer to its end: it decides whether the
// Job is done, creates or deletes pods, and counts those that ended.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.jobs.Cache().Get(key)
	if !ok {
		c.forget(key) // deleted: its pods are the garbage collector's
		return nil
	}
	cached := obj.(*batchv1.Job)
	if managedByOther(cached) {
		return nil // absorbed: another controller (spec.managedBy) runs this Job
	}
	if isFinished(cached) {
		c.backoff.forget(key)
		return nil // absorbed: a finished Job is not run again
	}
	if c.markedFinished(cached.UID) {
		return nil // absorbed: we finished it; the cache has not caught up yet
	}
	if c.behindOwnWrite(key, cached) {
		// Absorbed: the cache has not seen our last status write yet, and
		// counting from an older status could count pods twice; that
		// write's event brings the Job back (Kubernetes' consistency
		// store, feature StaleControllerConsistencyJob, does the same).
		return nil
	}
	job := cached.DeepCopy() // never modify the cache's copy
	job.SetGroupVersionKind(controllerKind)
	if m := job.Spec.CompletionMode; m != nil && *m != batchv1.NonIndexedCompletion && *m != batchv1.IndexedCompletion {
		c.rec.Event(job, corev1.EventTypeWarning, ReasonUnknownCompletionMode, "Skipped Job sync because completion mode is unknown")
		return nil // absorbed: retrying cannot help
	}
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	// Read the expectations before the pods: a pod event that arrives in
	// between has already updated the cache the pods are read from (the
	// informer stores an object before it calls the handlers), so a pod
	// is never both missing from the expectations and stale in the cache
	// — which would count a pod twice.
	satisfied := c.exp.satisfied(key)
	expectedRmFinalizers := c.finalizerExp.get(key)
	pods, err := c.claimPods(ctx, job)
	if err != nil {
		return err // retried
	}
	jc := &syncContext{key: key, job: job, pods: pods, activePods: activePods(pods),
		uncounted: newUncounted(job.Status.UncountedTerminatedPods), expectedRmFinalizers: expectedRmFinalizers}
	jc.ready = countReady(jc.activePods)
	jc.terminating = int32(len(terminatingPods(pods)))
	active := int32(len(jc.activePods))
	newSucceeded, newFailed := newFinishedPods(jc)
	jc.succeeded = job.Status.Succeeded + int32(len(newSucceeded)) + int32(len(jc.uncounted.succeeded))
	jc.failed = job.Status.Failed + int32(countedFailures(job, newFailed)) + int32(len(jc.uncounted.failed))
	now := c.clock.Now()
	if job.Status.StartTime == nil && !suspended(job) {
		job.Status.StartTime = &metav1.Time{Time: now} // the Job's first start
	}
	jc.newBackoffRecord = c.backoff.nextRecord(key, newSucceeded, newFailed)

	c.decideEnd(jc, now)

	var manageErr error
	suspendChanged := false
	if jc.finishedCondition != nil {
		// The Job is done: stop what still runs. It is declared finished
		// only when every pod is stopped and seen.
		deletedReady, deleted, err := c.deleteActivePods(ctx, job, jc.activePods)
		if deleted != active || !satisfied {
			jc.finishedCondition = nil
		}
		active -= deleted
		jc.terminating += deleted
		jc.ready -= deletedReady
		manageErr = err
	} else {
		managed := false
		if satisfied && job.DeletionTimestamp == nil {
			active, manageErr = c.manageJob(ctx, jc)
			managed = true
		}
		switch {
		case complete(jc, active):
			jc.finishedCondition = newCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue,
				batchv1.JobReasonCompletionsReached, msgCompletionsReached, now)
		case managed:
			suspendChanged = c.updateSuspended(job, now)
		}
	}

	needsUpdate := suspendChanged || active != job.Status.Active || !ptr.Equal(&jc.ready, job.Status.Ready) ||
		!ptr.Equal(&jc.terminating, job.Status.Terminating)
	job.Status.Active, job.Status.Ready, job.Status.Terminating = active, ptr.To(jc.ready), ptr.To(jc.terminating)
	if err := c.trackStatus(ctx, jc, needsUpdate); err != nil {
		return err // retried
	}
	return manageErr // retried if creating or deleting pods failed
}

// decideEnd evaluates, in Kubernetes' order, whether the Job has reached
// its end: an end already decided (SuccessCriteriaMet, FailureTarget),
// then the failures (a FailJob rule, backoffLimit, the deadline, failed
// indexes), then the success policy. Reaching completions is checked
// after manageJob, with the active pods it leaves.
func (c *Controller) decideEnd(jc *syncContext, now time.Time) {
	job := jc.job
	if cond := findCondition(job.Status.Conditions, batchv1.JobSuccessCriteriaMet); isSuccessCriteriaMet(cond) {
		jc.finishedCondition = cond
	} else if cond := findCondition(job.Status.Conditions, batchv1.JobFailureTarget); cond != nil && cond.Status == corev1.ConditionTrue {
		jc.finishedCondition = newCondition(batchv1.JobFailed, corev1.ConditionTrue, cond.Reason, cond.Message, now)
	} else if msg := failJobMessage(job, jc.pods); msg != nil {
		jc.finishedCondition = failureTarget(batchv1.JobReasonPodFailurePolicy, *msg, now)
	}
	if jc.finishedCondition == nil {
		switch {
		case jc.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, jc.pods):
			jc.finishedCondition = failureTarget(batchv1.JobReasonBackoffLimitExceeded, msgBackoffLimit, now)
		case c.pastActiveDeadline(job):
			jc.finishedCondition = failureTarget(batchv1.JobReasonDeadlineExceeded, msgDeadline, now)
		case job.Spec.ActiveDeadlineSeconds != nil && !suspended(job):
			// No event announces a deadline: wake up for it.
			left := time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second - c.clock.Since(job.Status.StartTime.Time)
			c.queue.AddAfter(jc.key, left)
		}
	}
	if !isIndexed(job) {
		return
	}
	jc.prevSucceededIndexes, jc.succeededIndexes = succeededIndexes(job, jc.pods)
	jc.succeeded = int32(jc.succeededIndexes.total())
	if hasBackoffLimitPerIndex(job) {
		jc.failedIndexes = failedIndexes(job, jc.pods)
		if jc.finishedCondition == nil {
			failed := jc.failedIndexes.total()
			switch {
			case job.Spec.MaxFailedIndexes != nil && failed > int(*job.Spec.MaxFailedIndexes):
				jc.finishedCondition = failureTarget(batchv1.JobReasonMaxFailedIndexesExceeded, msgMaxFailedIndexes, now)
			case failed > 0 && failed+jc.succeededIndexes.total() >= int(*job.Spec.Completions):
				jc.finishedCondition = failureTarget(batchv1.JobReasonFailedIndexes, msgFailedIndexes, now)
			}
		}
		jc.podsWithDelayedDeletionPerIndex = podsWithDelayedDeletionPerIndex(jc)
	}
	if jc.finishedCondition == nil {
		if msg, met := matchSuccessPolicy(job.Spec.SuccessPolicy, *job.Spec.Completions, jc.succeededIndexes); met {
			jc.finishedCondition = newCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, batchv1.JobReasonSuccessPolicy, msg, now)
		}
	}
}

// complete: enough pods succeeded and none still runs. A Job without
// completions is done at its first success, once its other pods end.
func complete(jc *syncContext, active int32) bool {
	if jc.job.Spec.Completions == nil {
		return jc.succeeded > 0 && active == 0
	}
	return jc.succeeded >= *jc.job.Spec.Completions && active == 0
}

// updateSuspended keeps the Suspended condition in step with spec.suspend
// and reports whether it changed. Suspending forgets startTime, so that
// the pod template may change again while the Job is suspended; resuming
// restarts it, so activeDeadlineSeconds counts active time only.
func (c *Controller) updateSuspended(job *batchv1.Job, now time.Time) bool {
	var changed bool
	if suspended(job) {
		job.Status.Conditions, changed = ensureCondition(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now)
		if changed {
			c.rec.Event(job, corev1.EventTypeNormal, ReasonSuspended, "Job suspended")
			job.Status.StartTime = nil
			c.log.Info("job sync: suspended", "job", client.KeyOf(job))
		}
		return changed
	}
	job.Status.Conditions, changed = ensureCondition(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", now)
	if changed {
		c.rec.Event(job, corev1.EventTypeNormal, ReasonResumed, "Job resumed")
		job.Status.StartTime = &metav1.Time{Time: now}
		c.log.Info("job sync: resumed", "job", client.KeyOf(job))
	}
	return changed
}

// pastBackoffLimitOnFailure: with restartPolicy OnFailure a failing
// container restarts in its pod, so the failures are its restarts: the
// Job fails when the running pods' restarts reach backoffLimit.
func pastBackoffLimitOnFailure(job *batchv1.Job, pods []*corev1.Pod) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			continue
		}
		for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			restarts += cs.RestartCount
		}
	}
	if *job.Spec.BackoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= *job.Spec.BackoffLimit
}

// pastActiveDeadline: the Job has been active (not suspended) for
// activeDeadlineSeconds.
func (c *Controller) pastActiveDeadline(job *batchv1.Job) bool {
	if job.Spec.ActiveDeadlineSeconds == nil || job.Status.StartTime == nil || suspended(job) {
		return false
	}
	return c.clock.Since(job.Status.StartTime.Time) >= time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second
}

// newFinishedPods are the pods that ended and are not counted yet (they
// still carry the finalizer and are not in uncountedTerminatedPods).
func newFinishedPods(jc *syncContext) (succeeded, failed []*corev1.Pod) {
	for _, p := range jc.pods {
		if !hasTrackingFinalizer(p) || jc.expectedRmFinalizers[p.UID] {
			continue
		}
		if isIndexed(jc.job) {
			if _, ok := validIndex(jc.job, p); !ok {
				continue
			}
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !jc.uncounted.succeeded[p.UID]:
			succeeded = append(succeeded, p)
		case isPodFailed(p, jc.job) && !jc.uncounted.failed[p.UID]:
			failed = append(failed, p)
		}
	}
	return succeeded, failed
}

// succeededIndexes returns the indexes status.completedIndexes lists, and
// those plus the indexes of succeeded pods not counted yet.
func succeededIndexes(job *batchv1.Job, pods []*corev1.Pod) (prev, all orderedIntervals) {
	prev = parseIndexes(job.Status.CompletedIndexes, int(*job.Spec.Completions))
	return prev, prev.withIndexes(sortedIndexes(pods, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded && hasTrackingFinalizer(p)
	}, job))
}

// failedIndexes: status.failedIndexes plus the indexes whose pod failed
// for good since.
func failedIndexes(job *batchv1.Job, pods []*corev1.Pod) *orderedIntervals {
	var prev orderedIntervals
	if job.Status.FailedIndexes != nil {
		prev = parseIndexes(*job.Status.FailedIndexes, int(*job.Spec.Completions))
	}
	all := prev.withIndexes(sortedIndexes(pods, func(p *corev1.Pod) bool {
		return hasTrackingFinalizer(p) && isIndexFailed(job, p)
	}, job))
	return &all
}

// sortedIndexes are the distinct valid indexes of the pods that pass, in
// increasing order.
func sortedIndexes(pods []*corev1.Pod, pass func(*corev1.Pod) bool, job *batchv1.Job) []int {
	seen := map[int]bool{}
	for _, p := range pods {
		if ix, ok := validIndex(job, p); ok && pass(p) {
			seen[ix] = true
		}
	}
	out := make([]int, 0, len(seen))
	for ix := 0; len(out) < len(seen); ix++ {
		if seen[ix] {
			out = append(out, ix)
		}
	}
	return out
}

func suspended(job *batchv1.Job) bool { return ptr.Deref(job.Spec.Suspend, false) }

// managedByOther: spec.managedBy names another controller, which runs
// the Job instead (Kueue, MultiKueue); this one leaves it alone.
func managedByOther(job *batchv1.Job) bool {
	return job.Spec.ManagedBy != nil && *job.Spec.ManagedBy != batchv1.JobControllerName
}
