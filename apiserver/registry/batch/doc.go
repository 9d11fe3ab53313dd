// Package batch declares the kinds of the batch/v1 group: Jobs, which run
// pods to completion (the job controller creates them and counts how they
// end), and CronJobs, which create Jobs on a schedule. Their pod templates
// follow the core group's pod rules, except that a Job's pods must not
// restart forever: restartPolicy is OnFailure or Never.
//
// Where things live:
//
//	file                what it holds
//	jobs.go             the Job kind: its defaults, the generated selector, its columns
//	jobs_validation.go  ValidateJobCreate, ValidateJobUpdate, ValidateJobTemplateSpec
//	jobs_status.go      what a status update may say
//	indexes.go          the completed and failed indexes of an Indexed Job, as intervals
//	cronjobs.go         the CronJob kind: its defaults, its validation (the schedule parsed), its columns
package batch
