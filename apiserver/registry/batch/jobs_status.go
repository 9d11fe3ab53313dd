package batch

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// A Job's status is written by whoever manages it (the job controller,
// or the controller spec.managedBy names), and read by everyone else:
// kubectl, CronJobs, the TTL controller. Kubernetes (feature JobManagedBy,
// GA) checks that it tells a consistent story: a Job ends at most once,
// Complete after SuccessCriteriaMet and Failed after FailureTarget, with
// no pod left running or uncounted, and its counters never go back.
//
// Most rules are checked only when a field they read changes, so that a
// status written before a rule existed can still be updated.

// validateJobStatusUpdate checks the status job would be written with,
// against old's (Kubernetes' ValidateJobStatusUpdate, with the options
// its status strategy sets).
func validateJobStatusUpdate(job, old *batchv1.Job) field.ErrorList {
	st, oldSt := &job.Status, &old.Status
	path := field.NewPath("status")
	changed := func(t batchv1.JobConditionType) bool {
		return anyConditionTrue(st.Conditions, t) != anyConditionTrue(oldSt.Conditions, t)
	}
	finishedChanged := isFinished(job) != isFinished(old)
	completeChanged, failedChanged := changed(batchv1.JobComplete), changed(batchv1.JobFailed)
	completedIndexesChanged := st.CompletedIndexes != oldSt.CompletedIndexes
	failedIndexesChanged := !ptr.Equal(st.FailedIndexes, oldSt.FailedIndexes)
	activeChanged := st.Active != oldSt.Active
	startChanged := !timeEqual(st.StartTime, oldSt.StartTime)
	completionChanged := !timeEqual(st.CompletionTime, oldSt.CompletionTime)
	zeroCompletionsSuspended := ptr.Deref(job.Spec.Suspend, false) && ptr.Deref(job.Spec.Completions, -1) == 0
	resuming := anyConditionTrue(oldSt.Conditions, batchv1.JobSuspended) && conditionFalse(st.Conditions, batchv1.JobSuspended)

	errs := validateJobStatus(job, path, statusChecks{
		completeWithFailed:        completeChanged || failedChanged,
		completeWithFailureTarget: completeChanged || changed(batchv1.JobFailureTarget),
		completionTime:            completeChanged || completionChanged,
		completionBeforeStart:     startChanged || completionChanged,
		failedWithoutTarget:       failedChanged || failedIndexesChanged,
		completeWithoutCriteria:   completeChanged || changed(batchv1.JobSuccessCriteriaMet),
		finishedWithActive:        finishedChanged || activeChanged,
		finishedWithoutStart:      (finishedChanged || startChanged) && !zeroCompletionsSuspended,
		finishedWithUncounted:     finishedChanged || !equality.Semantic.DeepEqual(st.UncountedTerminatedPods, oldSt.UncountedTerminatedPods),
		completedIndexes:          completedIndexesChanged,
		failedIndexes:             failedIndexesChanged,
		failedOverlapsCompleted:   failedIndexesChanged || completedIndexesChanged,
		finishedWithTerminating:   finishedChanged || !ptr.Equal(st.Terminating, oldSt.Terminating),
		moreReadyThanActive:       !ptr.Equal(st.Ready, oldSt.Ready) || activeChanged,
	})

	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
		if anyConditionTrue(oldSt.Conditions, t) && !anyConditionTrue(st.Conditions, t) {
			errs = append(errs, field.Invalid(path.Child("conditions"), field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", t)))
		}
	}
	if st.Failed < oldSt.Failed {
		errs = append(errs, field.Invalid(path.Child("failed"), st.Failed, "cannot decrease the failed counter"))
	}
	// An Indexed Job with completions == parallelism may be scaled down,
	// which forgets the indexes above the new completions.
	if (!isIndexed(&job.Spec) || !ptr.Equal(job.Spec.Completions, job.Spec.Parallelism)) && st.Succeeded < oldSt.Succeeded {
		errs = append(errs, field.Invalid(path.Child("succeeded"), st.Succeeded, "cannot decrease the succeeded counter"))
	}
	if st.CompletionTime != nil && oldSt.CompletionTime != nil && !timeEqual(st.CompletionTime, oldSt.CompletionTime) {
		errs = append(errs, field.Invalid(path.Child("completionTime"), st.CompletionTime, "field is immutable"))
	}
	// startTime is reset only by a suspension (and a resume after it).
	if startChanged && !resuming && oldSt.StartTime != nil && !ptr.Deref(job.Spec.Suspend, false) {
		errs = append(errs, field.Invalid(path.Child("startTime"), st.StartTime, "field is immutable for unsuspended job once set"))
	}
	criteria, oldCriteria := anyConditionTrue(st.Conditions, batchv1.JobSuccessCriteriaMet), anyConditionTrue(oldSt.Conditions, batchv1.JobSuccessCriteriaMet)
	if oldCriteria && !criteria {
		errs = append(errs, field.Invalid(path.Child("conditions"), field.OmitValueType{}, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if anyConditionTrue(oldSt.Conditions, batchv1.JobComplete) && !oldCriteria && criteria {
		errs = append(errs, field.Invalid(path.Child("conditions"), field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return errs
}

// statusChecks are the rules of validateJobStatus to apply (Kubernetes'
// JobStatusValidationOptions, named after what they reject).
type statusChecks struct {
	completeWithFailed, completeWithFailureTarget, completionTime, completionBeforeStart     bool
	failedWithoutTarget, completeWithoutCriteria                                             bool
	finishedWithActive, finishedWithoutStart, finishedWithUncounted, finishedWithTerminating bool
	completedIndexes, failedIndexes, failedOverlapsCompleted, moreReadyThanActive            bool
}

// validateJobStatus is Kubernetes' validateJobStatus.
func validateJobStatus(job *batchv1.Job, path *field.Path, check statusChecks) field.ErrorList {
	st := &job.Status
	var errs field.ErrorList
	for _, c := range []struct {
		name  string
		value *int32
	}{{"active", &st.Active}, {"succeeded", &st.Succeeded}, {"failed", &st.Failed}, {"ready", st.Ready}, {"terminating", st.Terminating}} {
		if c.value != nil {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*c.value), path.Child(c.name))...)
		}
	}
	if u := st.UncountedTerminatedPods; u != nil {
		seen := map[types.UID]bool{}
		for _, list := range []struct {
			name string
			uids []types.UID
		}{{"succeeded", u.Succeeded}, {"failed", u.Failed}} {
			for i, uid := range list.uids {
				p := path.Child("uncountedTerminatedPods", list.name).Index(i)
				switch {
				case uid == "":
					errs = append(errs, field.Invalid(p, uid, "must not be empty"))
				case seen[uid]:
					errs = append(errs, field.Duplicate(p, uid))
				}
				seen[uid] = true
			}
		}
	}
	conds := path.Child("conditions")
	complete, failed := anyConditionTrue(st.Conditions, batchv1.JobComplete), anyConditionTrue(st.Conditions, batchv1.JobFailed)
	target, criteria := anyConditionTrue(st.Conditions, batchv1.JobFailureTarget), anyConditionTrue(st.Conditions, batchv1.JobSuccessCriteriaMet)
	finished := complete || failed
	invalid := func(p *field.Path, v any, msg string) { errs = append(errs, field.Invalid(p, v, msg)) }
	if check.completeWithFailed && complete && failed {
		invalid(conds, field.OmitValueType{}, "cannot set Complete=True and Failed=true conditions")
	}
	if check.completeWithFailureTarget && complete && target {
		invalid(conds, field.OmitValueType{}, "cannot set Complete=True and FailureTarget=true conditions")
	}
	if check.completionTime && st.CompletionTime != nil && !complete {
		invalid(path.Child("completionTime"), st.CompletionTime, "cannot set completionTime when there is no Complete=True condition")
	}
	if check.completionTime && st.CompletionTime == nil && complete {
		errs = append(errs, field.Required(path.Child("completionTime"), "completionTime is required for Complete jobs"))
	}
	if check.completionBeforeStart && st.StartTime != nil && st.CompletionTime != nil && st.CompletionTime.Before(st.StartTime) {
		invalid(path.Child("completionTime"), st.CompletionTime, "must be equal to or after `startTime`")
	}
	if check.failedWithoutTarget && failed && !target {
		invalid(conds, field.OmitValueType{}, "cannot set Failed=True condition without the FailureTarget=true condition")
	}
	if check.completeWithoutCriteria && complete && !criteria {
		invalid(conds, field.OmitValueType{}, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition")
	}
	if check.finishedWithActive && st.Active > 0 && finished {
		invalid(path.Child("active"), st.Active, "active>0 is invalid for finished job")
	}
	if check.finishedWithoutStart && st.StartTime == nil && finished {
		errs = append(errs, field.Required(path.Child("startTime"), "startTime is required for finished job"))
	}
	if u := st.UncountedTerminatedPods; check.finishedWithUncounted && finished && u != nil && len(u.Failed)+len(u.Succeeded) > 0 {
		invalid(path.Child("uncountedTerminatedPods"), u, "must be empty for finished job")
	}
	completions := job.Spec.Completions
	if check.completedIndexes && completions != nil {
		if _, err := validateIndexesFormat(st.CompletedIndexes, *completions); err != nil {
			invalid(path.Child("completedIndexes"), st.CompletedIndexes, fmt.Sprintf("error parsing completedIndexes: %s", err))
		}
	}
	if check.failedIndexes && completions != nil && job.Spec.BackoffLimitPerIndex != nil && st.FailedIndexes != nil {
		if _, err := validateIndexesFormat(*st.FailedIndexes, *completions); err != nil {
			invalid(path.Child("failedIndexes"), st.FailedIndexes, fmt.Sprintf("error parsing failedIndexes: %s", err))
		}
	}
	if check.completedIndexes && st.CompletedIndexes != "" && !isIndexed(&job.Spec) {
		invalid(path.Child("completedIndexes"), st.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode")
	}
	if check.failedIndexes && job.Spec.BackoffLimitPerIndex == nil && st.FailedIndexes != nil {
		invalid(path.Child("failedIndexes"), *st.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null")
	}
	if check.failedOverlapsCompleted && completions != nil && st.FailedIndexes != nil {
		if err := failedIndexesOverlapCompleted(st.CompletedIndexes, *st.FailedIndexes, *completions); err != nil {
			invalid(path.Child("failedIndexes"), *st.FailedIndexes, err.Error())
		}
	}
	if check.finishedWithTerminating && ptr.Deref(st.Terminating, 0) > 0 && finished {
		invalid(path.Child("terminating"), st.Terminating, "terminating>0 is invalid for finished job")
	}
	if check.moreReadyThanActive && st.Ready != nil && *st.Ready > st.Active {
		invalid(path.Child("ready"), *st.Ready, "cannot set more ready pods than active")
	}
	if criteria && failed {
		invalid(conds, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and Failed=true conditions")
	}
	if criteria && target {
		invalid(conds, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions")
	}
	if job.Spec.SuccessPolicy != nil && !criteria && complete {
		invalid(conds, field.OmitValueType{}, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True")
	}
	return errs
}

// isFinished: Complete=True or Failed=True.
func isFinished(job *batchv1.Job) bool {
	return anyConditionTrue(job.Status.Conditions, batchv1.JobComplete) || anyConditionTrue(job.Status.Conditions, batchv1.JobFailed)
}

func conditionFalse(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionFalse {
			return true
		}
	}
	return false
}

// timeEqual compares two optional timestamps.
func timeEqual(a, b *metav1.Time) bool {
	return equality.Semantic.DeepEqual(a, b)
}
