package cronjob

import (
	"context"
	"slices"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/mkube/mkube/client"
)

// cleanupFinishedJobs keeps the CronJob's history to its limits: of the
// Jobs that succeeded, the newest spec.successfulJobsHistoryLimit (3 by
// default); of those that failed, the newest spec.failedJobsHistoryLimit
// (1). Older ones are deleted, their pods with them. It reports whether
// status.active changed.
func (c *Controller) cleanupFinishedJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) bool {
	if cj.Spec.SuccessfulJobsHistoryLimit == nil && cj.Spec.FailedJobsHistoryLimit == nil {
		return false // keep everything
	}
	var succeeded, failed []*batchv1.Job
	for _, job := range jobs {
		switch _, condition := jobFinished(job); condition {
		case batchv1.JobComplete:
			succeeded = append(succeeded, job)
		case batchv1.JobFailed:
			failed = append(failed, job)
		}
	}
	changed := false
	if limit := cj.Spec.SuccessfulJobsHistoryLimit; limit != nil && c.removeOldestJobs(ctx, cj, succeeded, int(*limit)) {
		changed = true
	}
	if limit := cj.Spec.FailedJobsHistoryLimit; limit != nil && c.removeOldestJobs(ctx, cj, failed, int(*limit)) {
		changed = true
	}
	return changed
}

// removeOldestJobs deletes all but the keep newest of jobs, by start time.
func (c *Controller) removeOldestJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, keep int) bool {
	extra := len(jobs) - keep
	if extra <= 0 {
		return false
	}
	c.log.Info("cronjob sync: deleting finished jobs beyond the history limit", "cronjob", client.KeyOf(cj), "finished", len(jobs), "limit", keep, "deleting", extra)
	jobs = slices.Clone(jobs)
	slices.SortFunc(jobs, byStartTime)
	changed := false
	for _, job := range jobs[:extra] {
		if c.deleteJob(ctx, cj, job) {
			changed = true
		}
	}
	return changed
}
