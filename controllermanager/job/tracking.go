package job

import (
	"context"
	"fmt"
	"sort"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
)

// maxUncountedPods bounds status.uncountedTerminatedPods, so the Job's
// status stays well under etcd's object size (Kubernetes: 500 UIDs, about
// 20 KB); a bigger backlog is counted over several syncs.
const maxUncountedPods = 500

// trackStatus counts the pods that ended, without ever counting one
// twice or losing one (Kubernetes' "job tracking with finalizers"):
//
//  1. each finished pod that still has the tracking finalizer goes to
//     status.uncountedTerminatedPods (or, for an Indexed Job, its index to
//     status.completedIndexes), and that status is written;
//  2. the finalizers of those pods are removed;
//  3. the pods whose finalizer is gone move from uncountedTerminatedPods
//     to status.succeeded or status.failed, in the next write.
//
// A crash between any two steps loses nothing: a pod is in
// uncountedTerminatedPods or still has its finalizer until it is in a
// counter. Last, if the Job's end was decided and every pod is counted
// and stopped, the final condition (Complete, Failed) is written.
func (c *Controller) trackStatus(ctx context.Context, jc *syncContext, needsFlush bool) error {
	job := jc.job
	uncountedStatus := job.Status.UncountedTerminatedPods
	if isIndexed(job) {
		sort.SliceStable(jc.pods, func(i, j int) bool { return completionIndex(jc.pods[i]) < completionIndex(jc.pods[j]) })
	}
	withFinalizer := map[types.UID]bool{}
	for _, p := range jc.pods {
		if hasTrackingFinalizer(p) && !jc.expectedRmFinalizers[p.UID] {
			withFinalizer[p.UID] = true
		}
	}
	if moveUncountedToCounters(&job.Status, withFinalizer) {
		needsFlush = true
	}
	var toRemove []*corev1.Pod
	var newSucceededIndexes []int
	reachedMax := false
	for _, p := range jc.pods {
		if !withFinalizer[p.UID] {
			continue // counted in an earlier sync
		}
		failed := isPodFailed(p, job)
		if !c.canRemoveFinalizer(jc, p, failed) {
			continue
		}
		toRemove = append(toRemove, p)
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !jc.uncounted.failed[p.UID]:
			if isIndexed(job) {
				// The index is enough to never count it twice.
				if ix, ok := validIndex(job, p); ok && !jc.prevSucceededIndexes.has(ix) {
					newSucceededIndexes = append(newSucceededIndexes, ix)
					needsFlush = true
				}
			} else if !jc.uncounted.succeeded[p.UID] {
				uncountedStatus.Succeeded = append(uncountedStatus.Succeeded, p.UID)
				needsFlush = true
			}
		case failed || (jc.finishedCondition != nil && !isSuccessCriteriaMet(jc.finishedCondition)):
			// A Job that failed counts every pod it stops as failed.
			_, validIx := validIndex(job, p)
			if !jc.uncounted.failed[p.UID] && (!isIndexed(job) || validIx) && matchPodFailurePolicy(job.Spec.PodFailurePolicy, p).count {
				uncountedStatus.Failed = append(uncountedStatus.Failed, p.UID)
				needsFlush = true
			}
		}
		if len(newSucceededIndexes)+len(uncountedStatus.Succeeded)+len(uncountedStatus.Failed) >= maxUncountedPods {
			reachedMax = true // the rest waits for the next sync, which our own write triggers
			break
		}
	}
	if isIndexed(job) {
		jc.succeededIndexes = jc.succeededIndexes.withIndexes(newSucceededIndexes)
		if s := jc.succeededIndexes.String(); s != job.Status.CompletedIndexes {
			job.Status.CompletedIndexes = s
			needsFlush = true
		}
		job.Status.Succeeded = int32(jc.succeededIndexes.total())
		var failed *string
		if jc.failedIndexes != nil {
			failed = ptr.To(jc.failedIndexes.String())
		}
		if !ptr.Equal(job.Status.FailedIndexes, failed) {
			job.Status.FailedIndexes = failed
			needsFlush = true
		}
	}
	// Write the interim condition now, before the finalizers go, so the
	// reason is recorded; the final one follows once every pod is counted.
	if fc := jc.finishedCondition; fc != nil && fc.Type == batchv1.JobFailureTarget {
		job.Status.Conditions = append(job.Status.Conditions, *fc)
		needsFlush = true
		jc.finishedCondition = newCondition(batchv1.JobFailed, corev1.ConditionTrue, fc.Reason, fc.Message, c.clock.Now())
	}
	if fc := jc.finishedCondition; isSuccessCriteriaMet(fc) {
		if !hasTrueCondition(job.Status.Conditions, batchv1.JobSuccessCriteriaMet) {
			job.Status.Conditions = append(job.Status.Conditions, *fc)
			needsFlush = true
		}
		jc.finishedCondition = newCondition(batchv1.JobComplete, corev1.ConditionTrue, fc.Reason, fc.Message, c.clock.Now())
	}
	needsFlush, err := c.flushAndRemoveFinalizers(ctx, jc, toRemove, withFinalizer, needsFlush)
	if err != nil {
		return err
	}
	finished := !reachedMax && c.enactFinished(jc)
	if !needsFlush && !finished {
		return nil
	}
	if err := c.updateStatus(ctx, jc); err != nil {
		return fmt.Errorf("removing uncounted pods from status: %w", err)
	}
	if finished {
		c.recordFinished(jc)
		c.markFinished(jc.job.UID)
	}
	return nil
}

// canRemoveFinalizer: a pod's finalizer goes once the pod is counted —
// it succeeded, or failed — or when the whole Job is ending or being
// deleted. With backoffLimitPerIndex, the last failed pod of an index
// keeps it until its replacement exists.
func (c *Controller) canRemoveFinalizer(jc *syncContext, p *corev1.Pod, failed bool) bool {
	if jc.job.DeletionTimestamp != nil || jc.finishedCondition != nil || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if !failed {
		return false
	}
	if hasBackoffLimitPerIndex(jc.job) {
		if ix := completionIndex(p); ix != unknownIndex {
			if delayed, ok := jc.podsWithDelayedDeletionPerIndex[ix]; ok && delayed.UID == p.UID {
				return false
			}
		}
	}
	return true
}

// flushAndRemoveFinalizers writes the status with the new uncounted pods
// (steps 1), removes the finalizers (2) and moves the pods whose
// finalizer is gone to the counters (3); if some removals failed, it
// writes that partial progress. It returns whether the status still has
// changes to write.
func (c *Controller) flushAndRemoveFinalizers(ctx context.Context, jc *syncContext, pods []*corev1.Pod, withFinalizer map[types.UID]bool, needsFlush bool) (bool, error) {
	if needsFlush {
		if err := c.updateStatus(ctx, jc); err != nil {
			return needsFlush, fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		c.backoff.set(jc.key, jc.newBackoffRecord)
		needsFlush = false
	}
	var rmErr error
	if len(pods) > 0 {
		var removed []bool
		removed, rmErr = c.removeFinalizers(ctx, jc.key, pods)
		for i, p := range pods {
			if removed[i] {
				delete(withFinalizer, p.UID)
			}
		}
	}
	if moveUncountedToCounters(&jc.job.Status, withFinalizer) {
		needsFlush = true
	}
	if rmErr != nil && needsFlush {
		if err := c.updateStatus(ctx, jc); err != nil {
			return needsFlush, fmt.Errorf("removing uncounted pods from status: %w", err)
		}
	}
	return needsFlush, rmErr
}

// moveUncountedToCounters moves the uncounted pods whose finalizer is
// gone into status.succeeded and status.failed.
func moveUncountedToCounters(st *batchv1.JobStatus, withFinalizer map[types.UID]bool) bool {
	u := st.UncountedTerminatedPods
	keep := func(uids []types.UID) []types.UID {
		var out []types.UID
		for _, uid := range uids {
			if withFinalizer[uid] {
				out = append(out, uid)
			}
		}
		return out
	}
	changed := false
	if s := keep(u.Succeeded); len(s) != len(u.Succeeded) {
		st.Succeeded += int32(len(u.Succeeded) - len(s))
		u.Succeeded, changed = s, true
	}
	if f := keep(u.Failed); len(f) != len(u.Failed) {
		st.Failed += int32(len(u.Failed) - len(f))
		u.Failed, changed = f, true
	}
	return changed
}

// removeFinalizers removes the tracking finalizer of the pods, all at
// once, and reports for each whether it is gone (a pod already deleted
// counts as gone).
func (c *Controller) removeFinalizers(ctx context.Context, key string, pods []*corev1.Pod) ([]bool, error) {
	uids := make([]types.UID, len(pods))
	for i, p := range pods {
		uids[i] = p.UID
	}
	c.finalizerExp.add(key, uids...)
	removed := make([]bool, len(pods))
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() {
			err := c.removeTrackingFinalizer(ctx, p)
			if err != nil {
				c.finalizerExp.remove(key, p.UID) // no update will come
				if !apierrors.IsNotFound(err) {
					errs[i] = err
					return
				}
			}
			removed[i] = true
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// enactFinished adds the final condition, Complete or Failed, once no
// pod is uncounted or still terminating; it reports whether it did.
func (c *Controller) enactFinished(jc *syncContext) bool {
	fc := jc.finishedCondition
	if fc == nil {
		return false
	}
	job := jc.job
	if u := job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		return false // counted first
	}
	if jc.terminating > 0 {
		return false // stopped first
	}
	job.Status.Conditions, _ = ensureCondition(job.Status.Conditions, fc.Type, fc.Status, fc.Reason, fc.Message, c.clock.Now())
	if fc.Type == batchv1.JobComplete {
		job.Status.CompletionTime = &fc.LastTransitionTime
	}
	return true
}

// recordFinished posts the Job's last events: Completed, or the reason
// it failed (BackoffLimitExceeded, DeadlineExceeded, ...) with its message.
func (c *Controller) recordFinished(jc *syncContext) {
	job, fc := jc.job, jc.finishedCondition
	if fc.Type == batchv1.JobComplete {
		if job.Spec.Completions != nil && job.Status.Succeeded > *job.Spec.Completions {
			c.rec.Event(job, corev1.EventTypeWarning, ReasonTooManySucceededPods, "Too many succeeded pods running after completion count reached")
		}
		c.rec.Event(job, corev1.EventTypeNormal, ReasonCompleted, "Job completed")
		c.log.Info("job sync: job completed", "job", jc.key, "reason", fc.Reason, "succeeded", job.Status.Succeeded)
		return
	}
	c.rec.Event(job, corev1.EventTypeWarning, fc.Reason, "%s", fc.Message)
	c.log.Info("job sync: job failed", "job", jc.key, "reason", fc.Reason, "message", fc.Message, "failed", job.Status.Failed)
}

// updateStatus writes jc.job's status and keeps the server's answer as
// jc.job, for the next write of this sync. A conflict (the Job changed
// meanwhile) fails the sync, which is retried on the fresh Job.
func (c *Controller) updateStatus(ctx context.Context, jc *syncContext) error {
	out := &batchv1.Job{}
	if err := c.client.UpdateStatus(ctx, client.Jobs, jc.job.Namespace, jc.job.Name, jc.job, out); err != nil {
		return err
	}
	out.SetGroupVersionKind(controllerKind)
	if out.Status.UncountedTerminatedPods == nil {
		out.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	jc.job = out
	c.wroteStatus(jc.key, out)
	c.log.Info("job sync: updated status", "job", jc.key, "active", out.Status.Active, "ready", ptr.Deref(out.Status.Ready, 0),
		"succeeded", out.Status.Succeeded, "failed", out.Status.Failed,
		"uncountedSucceeded", len(out.Status.UncountedTerminatedPods.Succeeded), "uncountedFailed", len(out.Status.UncountedTerminatedPods.Failed))
	return nil
}
