package cronjob

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/cronschedule"
)

// sync is one CronJob's turn: clean up its history, run what is due,
// write status once for both, and sleep until the next schedule time.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.cronJobs.Cache().Get(key)
	if !ok {
		// Deleted: its Jobs are the garbage collector's. Not retried.
		c.forget(key)
		return nil
	}
	cj := obj.(*batchv1.CronJob).DeepCopy() // never write to the cache's copy
	// Events name the object by its kind: make sure the copy has it.
	cj.APIVersion, cj.Kind = cronJobKind.GroupVersion().String(), cronJobKind.Kind
	jobs := c.jobsOf(cj)

	cleaned := c.cleanupFinishedJobs(ctx, cj, jobs)
	requeueAfter, synced, syncErr := c.syncCronJob(ctx, cj, jobs)
	if cleaned || synced {
		if _, err := c.api.UpdateStatus(ctx, cj); err != nil {
			// Retried with backoff: a conflict means the cache was
			// behind, and the next try reads the newer version.
			return fmt.Errorf("update status of cronjob %s: %w", key, err)
		}
	}
	if requeueAfter != nil {
		c.log.Debug("cronjob sync: next sync", "cronjob", key, "in", requeueAfter.Round(time.Millisecond))
		c.enqueueAfter(key, *requeueAfter)
		return nil // woken on schedule; that sync retries what failed
	}
	// No wake-up: suspended, being deleted, or a schedule that cannot
	// run. An error here is retried; otherwise only a change wakes it.
	return syncErr
}

// jobsOf are the Jobs the CronJob controls, from the Job cache.
func (c *Controller) jobsOf(cj *batchv1.CronJob) []*batchv1.Job {
	var out []*batchv1.Job
	for _, obj := range c.jobs.Cache().ByIndex(client.IndexByOwnerUID, string(cj.UID)) {
		if job := obj.(*batchv1.Job); metav1.IsControlledBy(job, cj) {
			out = append(out, job)
		}
	}
	return out
}

// syncCronJob reconciles cj (a private copy, changed in place) with its
// Jobs and creates the Job that is due. It returns when to sync again
// (nil: only on a change), whether cj's status changed, and an error.
func (c *Controller) syncCronJob(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*time.Duration, bool, error) {
	key := client.KeyOf(cj)
	now := c.clock.Now()
	changed := false

	// 1. status.active against the Jobs that exist.
	children := map[types.UID]bool{}
	for _, job := range jobs {
		children[job.UID] = true
		active := inActive(cj, job.UID)
		finished, condition := jobFinished(job)
		switch {
		case !active && !finished:
			// Ours and running, but not in status.active: a Job we
			// created just before a crash, or a status our cache has not
			// seen yet. Ask the server before calling it unexpected.
			fresh, err := c.api.GetCronJob(ctx, cj.Namespace, cj.Name)
			if err != nil {
				return nil, changed, fmt.Errorf("get cronjob %s: %w", key, err)
			}
			if inActive(fresh, job.UID) {
				fresh.DeepCopyInto(cj)
				continue
			}
			c.rec.Event(cj, corev1.EventTypeWarning, ReasonUnexpectedJob, "Saw a job that the controller did not create or forgot: %s", job.Name)
		case finished:
			if active {
				removeActive(cj, job.UID)
				c.log.Info("cronjob sync: job finished, removed from active", "cronjob", key, "job", job.Name, "condition", condition)
				c.rec.Event(cj, corev1.EventTypeNormal, ReasonSawCompletedJob, "Saw completed job: %s, condition: %v", job.Name, condition)
				changed = true
			}
			// The latest success is recorded whether or not the Job was
			// still in status.active.
			if t := job.Status.CompletionTime; condition == batchv1.JobComplete && t != nil &&
				(cj.Status.LastSuccessfulTime == nil || t.After(cj.Status.LastSuccessfulTime.Time)) {
				cj.Status.LastSuccessfulTime = t.DeepCopy()
				changed = true
			}
		}
	}
	// A Job in status.active that no longer exists (deleted by hand)
	// would keep a Forbid CronJob from ever running again: drop it, once
	// the server confirms the cache is not just late.
	for _, ref := range slices.Clone(cj.Status.Active) {
		if children[ref.UID] {
			continue
		}
		_, err := c.api.GetJob(ctx, ref.Namespace, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			c.log.Info("cronjob sync: active job went missing", "cronjob", key, "job", ref.Name)
			c.rec.Event(cj, corev1.EventTypeNormal, ReasonMissingJob, "Active job went missing: %v", ref.Name)
			removeActive(cj, ref.UID)
			changed = true
		case err != nil:
			return nil, changed, fmt.Errorf("get job %s/%s: %w", ref.Namespace, ref.Name, err)
		}
	}

	// 2. Should anything run?
	if cj.DeletionTimestamp != nil {
		return nil, changed, nil // being deleted: status only
	}
	if cj.Spec.TimeZone != nil {
		if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
			c.rec.Event(cj, corev1.EventTypeWarning, ReasonUnknownTimeZone, "invalid timeZone: %q: %s", *cj.Spec.TimeZone, err)
			return nil, changed, nil
		}
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		c.log.Debug("cronjob sync: suspended, not starting jobs", "cronjob", key)
		return nil, changed, nil
	}
	sched, err := c.parseSchedule(cj)
	if err != nil {
		c.log.Warn("cronjob sync: unparseable schedule", "cronjob", key, "schedule", cj.Spec.Schedule, "err", err)
		c.rec.Event(cj, corev1.EventTypeWarning, ReasonUnparseableSchedule, "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	scheduled, err := c.nextScheduleTime(cj, now, sched)
	if err != nil {
		c.log.Warn("cronjob sync: invalid schedule", "cronjob", key, "schedule", cj.Spec.Schedule, "err", err)
		c.rec.Event(cj, corev1.EventTypeWarning, ReasonInvalidSchedule, "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	next := func() *time.Duration { d := nextScheduleDelay(cj, now, sched); return &d }
	if scheduled == nil {
		// Nothing due: woken early (a Job changed) or just created.
		return next(), changed, nil
	}
	// The search already left out times older than the starting
	// deadline, so this is Kubernetes' safety net: a late time is skipped
	// (MissSchedule), never run.
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		c.log.Info("cronjob sync: missed the starting deadline", "cronjob", key, "scheduledTime", scheduled, "startingDeadlineSeconds", *d)
		c.rec.Event(cj, corev1.EventTypeWarning, ReasonMissSchedule, "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return next(), changed, nil
	}
	name := jobName(cj, *scheduled)
	if activeByName(cj, name) || (cj.Status.LastScheduleTime != nil && cj.Status.LastScheduleTime.Time.Equal(*scheduled)) {
		return next(), changed, nil // this time has run already
	}

	// 3. The concurrency policy decides about the Jobs still running.
	switch {
	case cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0:
		// Skipped, not postponed: the next run is at the next time.
		c.log.Info("cronjob sync: previous job still running, concurrencyPolicy Forbid skips this run", "cronjob", key, "scheduledTime", scheduled)
		c.rec.Event(cj, corev1.EventTypeNormal, ReasonJobAlreadyActive, "Not starting job because prior execution is running and concurrency policy is Forbid")
		return next(), changed, nil
	case cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent:
		for _, ref := range slices.Clone(cj.Status.Active) {
			job, err := c.api.GetJob(ctx, ref.Namespace, ref.Name)
			if err != nil {
				c.rec.Event(cj, corev1.EventTypeWarning, ReasonFailedGet, "Get job: %v", err)
				return nil, changed, fmt.Errorf("get job %s/%s: %w", ref.Namespace, ref.Name, err)
			}
			c.log.Info("cronjob sync: concurrencyPolicy Replace deletes the running job", "cronjob", key, "job", job.Name)
			if !c.deleteJob(ctx, cj, job) {
				return nil, changed, fmt.Errorf("could not replace job %s/%s", job.Namespace, job.Name)
			}
			changed = true
		}
	}

	// 4. Create the Job; its name makes a second attempt for the same
	// time fail with AlreadyExists.
	req, err := newJob(cj, *scheduled)
	if err != nil {
		return nil, changed, fmt.Errorf("make job for cronjob %s: %w", key, err)
	}
	job, err := c.api.CreateJob(ctx, req)
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, changed, err // the namespace is going; retried until the CronJob goes too
	case apierrors.IsAlreadyExists(err):
		job, err = c.api.GetJob(ctx, req.Namespace, req.Name)
		if err != nil {
			return nil, changed, fmt.Errorf("get job %s/%s: %w", req.Namespace, req.Name, err)
		}
		if !metav1.IsControlledBy(job, cj) || inActive(cj, job.UID) {
			// Someone else's Job with our name, or ours already
			// recorded: nothing to add.
			return nil, changed, nil
		}
		c.log.Info("cronjob sync: job already exists, recording it", "cronjob", key, "job", job.Name)
	case err != nil:
		c.rec.Event(cj, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating job: %v", err)
		return nil, changed, fmt.Errorf("create job for cronjob %s: %w", key, err)
	default:
		c.log.Info("cronjob sync: created job", "cronjob", key, "job", job.Name, "scheduledTime", scheduled,
			"concurrencyPolicy", cj.Spec.ConcurrencyPolicy)
		c.rec.Event(cj, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created job %v", job.Name)
	}
	cj.Status.Active = append(cj.Status.Active, jobRef(job))
	cj.Status.LastScheduleTime = &metav1.Time{Time: *scheduled}
	return next(), true, nil
}

// parseSchedule parses spec.schedule in spec.timeZone. A schedule that
// names its own zone is allowed only in old CronJobs, with a warning.
func (c *Controller) parseSchedule(cj *batchv1.CronJob) (cron.Schedule, error) {
	if cronschedule.HasTimeZone(cj.Spec.Schedule) {
		c.rec.Event(cj, corev1.EventTypeWarning, ReasonUnsupportedSchedule, "CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", cj.Spec.Schedule)
	}
	return cronschedule.Parse(cronschedule.InTimeZone(cj.Spec.Schedule, cj.Spec.TimeZone))
}

// nextScheduleTime is the schedule time to run now, if any: the most
// recent one not older than the starting deadline. Past 100 missed times
// it warns (TooManyMissedTimes) and still runs the most recent.
func (c *Controller) nextScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) (*time.Time, error) {
	_, mostRecent, missed, err := mostRecentScheduleTime(cj, now, sched, true)
	if mostRecent == nil || mostRecent.After(now) {
		return nil, err
	}
	if missed == manyMissed {
		c.log.Warn("cronjob sync: too many missed start times", "cronjob", client.KeyOf(cj))
		c.rec.Event(cj, corev1.EventTypeWarning, ReasonTooManyMissedTimes, "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	return mostRecent, err
}

// deleteJob deletes a Job and drops it from status.active; false if the
// delete failed.
func (c *Controller) deleteJob(ctx context.Context, cj *batchv1.CronJob, job *batchv1.Job) bool {
	if err := c.api.DeleteJob(ctx, job.Namespace, job.Name); err != nil {
		c.log.Warn("cronjob sync: deleting job failed", "cronjob", client.KeyOf(cj), "job", job.Name, "err", err)
		c.rec.Event(cj, corev1.EventTypeWarning, ReasonFailedDelete, "Deleted job: %v", err)
		return false
	}
	removeActive(cj, job.UID)
	c.log.Info("cronjob sync: deleted job", "cronjob", client.KeyOf(cj), "job", job.Name)
	c.rec.Event(cj, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted job %v", job.Name)
	return true
}

func inActive(cj *batchv1.CronJob, uid types.UID) bool {
	return slices.ContainsFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == uid })
}

func activeByName(cj *batchv1.CronJob, name string) bool {
	return slices.ContainsFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.Name == name && r.Namespace == cj.Namespace })
}

// removeActive drops a Job from status.active.
func removeActive(cj *batchv1.CronJob, uid types.UID) {
	cj.Status.Active = slices.DeleteFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == uid })
}
