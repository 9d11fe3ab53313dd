package batch

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// testCronJob is what `kubectl create cronjob hello --image=busybox
// --schedule='*/1 * * * *' -- sh -c 'exit 0'` sends, defaulted.
func testCronJob() *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec: batchv1.CronJobSpec{
			Schedule: "*/1 * * * *",
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Name: "hello"},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers:    []corev1.Container{{Name: "hello", Image: "busybox", Command: []string{"sh", "-c", "exit 0"}}},
				}}},
			},
		},
	}
	defaultCronJob(cj)
	return cj
}

func TestDefaultCronJob(t *testing.T) {
	cj := testCronJob()
	s := cj.Spec
	if s.ConcurrencyPolicy != batchv1.AllowConcurrent || !ptr.Equal(s.Suspend, ptr.To(false)) ||
		!ptr.Equal(s.SuccessfulJobsHistoryLimit, ptr.To[int32](3)) || !ptr.Equal(s.FailedJobsHistoryLimit, ptr.To[int32](1)) {
		t.Errorf("CronJob defaults = %s, suspend %v, keep %v succeeded and %v failed; want Allow, false, 3, 1",
			s.ConcurrencyPolicy, ptr.Deref(s.Suspend, true), ptr.Deref(s.SuccessfulJobsHistoryLimit, -1), ptr.Deref(s.FailedJobsHistoryLimit, -1))
	}
	pod := s.JobTemplate.Spec.Template.Spec
	if pod.DNSPolicy != corev1.DNSClusterFirst || pod.Containers[0].TerminationMessagePath == "" || pod.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("the pod template was not defaulted as a pod's: %+v", pod)
	}
	// The Job's own defaults belong to the Jobs the controller creates.
	if s.JobTemplate.Spec.BackoffLimit != nil || s.JobTemplate.Spec.Completions != nil {
		t.Errorf("Job defaults applied to the template: %+v", s.JobTemplate.Spec)
	}

	set := testCronJob()
	set.Spec.ConcurrencyPolicy, set.Spec.Suspend, set.Spec.SuccessfulJobsHistoryLimit = batchv1.ForbidConcurrent, ptr.To(true), ptr.To[int32](0)
	defaultCronJob(set)
	if set.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent || !*set.Spec.Suspend || *set.Spec.SuccessfulJobsHistoryLimit != 0 {
		t.Errorf("defaulting overwrote what the user set: %+v", set.Spec)
	}
}

func TestValidateCronJob(t *testing.T) {
	tests := []struct {
		name   string
		change func(cj *batchv1.CronJob)
		want   string // the one error, as kubectl prints it; "" = valid
	}{
		{"kubectl's create cronjob is valid", func(*batchv1.CronJob) {}, ""},
		{"a descriptor is a schedule", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "@hourly" }, ""},
		{"a schedule is required", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "" }, "spec.schedule: Required value"},
		{"a schedule that does not parse is invalid, in the cron library's words",
			func(cj *batchv1.CronJob) { cj.Spec.Schedule = "every minute" },
			`spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]`},
		{"a sixth field, for seconds, is refused", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "*/10 * * * * *" },
			`spec.schedule: Invalid value: "*/10 * * * * *": expected exactly 5 fields, found 6: [*/10 * * * * *]`},
		{"a schedule may not name its time zone", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "TZ=UTC 0 * * * *" },
			`spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`},
		{"CRON_TZ is refused the same way", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "CRON_TZ=UTC 0 * * * *" },
			`spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`},
		{"an IANA time zone is valid", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("America/New_York") }, ""},
		{"Etc/UTC is valid", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Etc/UTC") }, ""},
		{"an unknown time zone is invalid", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("bad-time-zone") },
			`spec.timeZone: Invalid value: "bad-time-zone": unknown time zone bad-time-zone`},
		{"a path is not a time zone", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("../etc/passwd") },
			`spec.timeZone: Invalid value: "../etc/passwd": unknown time zone ../etc/passwd`},
		{"an empty time zone is invalid", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("") },
			`spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string`},
		{"Local is not explicit", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Local") },
			`spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones`},
		{"a negative starting deadline is invalid", func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) },
			"spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0"},
		{"a zero starting deadline is valid", func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](0) }, ""},
		{"an unknown concurrency policy is not supported", func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = "Sometimes" },
			`spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"`},
		{"a negative history limit is invalid", func(cj *batchv1.CronJob) { cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](-1) },
			"spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0"},
		{"a history limit of zero keeps nothing, and is valid", func(cj *batchv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0) }, ""},
		{"a name of 52 characters leaves room for the Job's suffix", func(cj *batchv1.CronJob) { cj.Name = strings.Repeat("a", 52) }, ""},
		{"a name of 53 characters does not", func(cj *batchv1.CronJob) { cj.Name = strings.Repeat("a", 53) },
			`metadata.name: Invalid value: "` + strings.Repeat("a", 53) + `": must be no more than 52 characters`},
		{"the template's pods must end: restartPolicy Always is refused", func(cj *batchv1.CronJob) {
			cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}, `spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`},
		{"the template's selector is generated, not given", func(cj *batchv1.CronJob) {
			cj.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
		}, "spec.jobTemplate.spec.selector: Invalid value: "},
		{"the template is a Job's spec: a negative backoffLimit is invalid", func(cj *batchv1.CronJob) {
			cj.Spec.JobTemplate.Spec.BackoffLimit = ptr.To[int32](-1)
		}, "spec.jobTemplate.spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"},
		{"the template's pod spec is a pod's: a container needs an image", func(cj *batchv1.CronJob) {
			cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = ""
		}, "spec.jobTemplate.spec.template.spec.containers[0].image: Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cj := testCronJob()
			tt.change(cj)
			assertOneError(t, validateCronJobCreate(cj), tt.want)
		})
	}
}

func TestValidateCronJobUpdate(t *testing.T) {
	tests := []struct {
		name        string
		old, change func(cj *batchv1.CronJob)
		want        string
	}{
		{"a CronJob whose schedule already named a time zone may keep it",
			func(cj *batchv1.CronJob) { cj.Spec.Schedule = "TZ=UTC 0 * * * *" },
			func(cj *batchv1.CronJob) { cj.Spec.Schedule = "TZ=UTC 30 * * * *" }, ""},
		{"but not together with timeZone",
			func(cj *batchv1.CronJob) { cj.Spec.Schedule = "TZ=UTC 0 * * * *" },
			func(cj *batchv1.CronJob) { cj.Spec.Schedule = "TZ=UTC 30 * * * *"; cj.Spec.TimeZone = ptr.To("UTC") },
			`spec.schedule: Invalid value: "TZ=UTC 30 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule`},
		{"a schedule may not start naming a time zone",
			func(*batchv1.CronJob) {},
			func(cj *batchv1.CronJob) { cj.Spec.Schedule = "TZ=UTC 30 * * * *" },
			`spec.schedule: Invalid value: "TZ=UTC 30 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`},
		{"suspending is an update like any other", func(*batchv1.CronJob) {}, func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, cj := testCronJob(), testCronJob()
			tt.old(old)
			tt.old(cj)
			tt.change(cj)
			assertOneError(t, validateCronJobSpec(&cj.Spec, &old.Spec), tt.want)
		})
	}
	long := testCronJob()
	long.Name = strings.Repeat("a", 60)
	if errs := CronJobs.Validate(long, long.DeepCopy()); len(errs) != 0 {
		t.Errorf("an existing CronJob with a long name cannot be updated: %v", errs)
	}
}

// assertOneError checks that errs is want alone, or empty if want is "";
// want may be a prefix of the error.
func assertOneError(t *testing.T, errs field.ErrorList, want string) {
	t.Helper()
	if want == "" {
		if len(errs) != 0 {
			t.Errorf("want valid, got %v", errs)
		}
		return
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), want) {
		t.Errorf("errors = %v, want one: %s", errs, want)
	}
}

func TestCronJobRow(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	cj := testCronJob()
	cj.CreationTimestamp = metav1.NewTime(now.Add(-10 * time.Minute))
	if got := cronJobRow(cj, now); !equalCells(got, []any{"*/1 * * * *", "<none>", "False", int64(0), "<none>", "10m", "hello", "busybox", "<none>"}) {
		t.Errorf("a new CronJob's row = %v", got)
	}
	cj.Spec.TimeZone, cj.Spec.Suspend = ptr.To("Europe/Paris"), ptr.To(true)
	cj.Status.LastScheduleTime = &metav1.Time{Time: now.Add(-45 * time.Second)}
	cj.Status.Active = []corev1.ObjectReference{{Name: "hello-28573919"}}
	if got := cronJobRow(cj, now); !equalCells(got, []any{"*/1 * * * *", "Europe/Paris", "True", int64(1), "45s", "10m", "hello", "busybox", "<none>"}) {
		t.Errorf("a suspended CronJob with an active Job's row = %v", got)
	}
	if n, cells := len(cronJobColumns), len(cronJobRow(cj, now)); n != cells {
		t.Errorf("%d columns but %d cells", n, cells)
	}
}

func equalCells(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
