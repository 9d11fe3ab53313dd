package job

import (
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Job ends in two steps. First the interim condition: SuccessCriteriaMet
// (enough pods succeeded, or the success policy matched) or FailureTarget
// (a backoff limit, the deadline, a FailJob rule). The controller then
// stops the remaining pods and counts every pod; only when none is left
// running or uncounted does it write the terminal condition, Complete or
// Failed, with the interim one's reason and message. Clients that watch
// for Complete or Failed thus never see a Job end with pods still around.

// The reasons and messages Kubernetes writes.
const (
	msgCompletionsReached = "Reached expected number of succeeded pods"
	msgBackoffLimit       = "Job has reached the specified backoff limit"
	msgDeadline           = "Job was active longer than specified deadline"
	msgMaxFailedIndexes   = "Job has exceeded the specified maximal number of failed indexes"
	msgFailedIndexes      = "Job has failed indexes"
)

func newCondition(t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) *batchv1.JobCondition {
	return &batchv1.JobCondition{Type: t, Status: status, Reason: reason, Message: message,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
}

func failureTarget(reason, message string, now time.Time) *batchv1.JobCondition {
	return newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, reason, message, now)
}

func findCondition(list []batchv1.JobCondition, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range list {
		if list[i].Type == t {
			return &list[i]
		}
	}
	return nil
}

func hasTrueCondition(list []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	c := findCondition(list, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// isFinished: Complete or Failed, the end of a Job.
func isFinished(job *batchv1.Job) bool {
	return slices.ContainsFunc(job.Status.Conditions, func(c batchv1.JobCondition) bool {
		return (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue
	})
}

func isSuccessCriteriaMet(c *batchv1.JobCondition) bool {
	return c != nil && c.Type == batchv1.JobSuccessCriteriaMet && c.Status == corev1.ConditionTrue
}

// ensureCondition sets condition t to status (with reason and message),
// reporting whether anything changed; it does not add a False condition
// that was never there, as going from nothing to False says nothing.
func ensureCondition(list []batchv1.JobCondition, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) ([]batchv1.JobCondition, bool) {
	if c := findCondition(list, t); c != nil {
		if c.Status == status && c.Reason == reason && c.Message == message {
			return list, false
		}
		*c = *newCondition(t, status, reason, message, now)
		return list, true
	}
	if status == corev1.ConditionFalse {
		return list, false
	}
	return append(list, *newCondition(t, status, reason, message, now)), true
}
