package cronjob

import (
	"cmp"
	"fmt"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// cronJobKind is the kind of the Jobs' controller references.
var cronJobKind = batchv1.SchemeGroupVersion.WithKind("CronJob")

// jobName is the Job of one schedule time: "<cronjob>-<minutes since the
// epoch>" (hello-28573921). The name is the lock that keeps one schedule
// time from running twice: if the controller restarts after creating the
// Job but before recording it in status, its second attempt is refused
// with AlreadyExists. Minutes, because no schedule is finer than that.
func jobName(cj *batchv1.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}

// newJob is the Job the CronJob runs at the scheduled time: the job
// template's labels, annotations and spec, the scheduled time as the
// batch.kubernetes.io/cronjob-scheduled-timestamp annotation (RFC 3339,
// in spec.timeZone, else UTC), and a controller reference to the CronJob,
// which makes the garbage collector delete the Job with it.
func newJob(cj *batchv1.CronJob, scheduled time.Time) (*batchv1.Job, error) {
	loc, err := time.LoadLocation(ptr.Deref(cj.Spec.TimeZone, "")) // "" is UTC
	if err != nil {
		return nil, err
	}
	annotations := maps.Clone(cj.Spec.JobTemplate.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	labels := maps.Clone(cj.Spec.JobTemplate.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            jobName(cj, scheduled),
			Namespace:       cj.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, cronJobKind)},
		},
	}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&job.Spec)
	return job, nil
}

// jobRef is how status.active names a Job.
func jobRef(job *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Job", APIVersion: batchv1.SchemeGroupVersion.String(),
		Namespace: job.Namespace, Name: job.Name, UID: job.UID, ResourceVersion: job.ResourceVersion}
}

// jobFinished reports whether the job controller has marked the Job
// Complete or Failed, and which.
func jobFinished(job *batchv1.Job) (bool, batchv1.JobConditionType) {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c.Type
		}
	}
	return false, ""
}

// byStartTime orders Jobs oldest first, for history cleanup: by
// status.startTime, Jobs that never started last, names breaking ties.
func byStartTime(a, b *batchv1.Job) int {
	switch sa, sb := a.Status.StartTime, b.Status.StartTime; {
	case sa == nil && sb != nil:
		return 1
	case sa != nil && sb == nil:
		return -1
	case sa.Equal(sb):
		return cmp.Compare(a.Name, b.Name)
	case sa.Before(sb):
		return -1
	default:
		return 1
	}
}
