// Package batch declares the kinds of the batch/v1 group: Jobs, which run
// pods to completion (the job controller creates them and counts how they
// end), and CronJobs, which create Jobs on a schedule. Their pod templates
// follow the core group's pod rules, except that a Job's pods must not
// restart forever: restartPolicy is OnFailure or Never.
package batch
