package batch

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/core"
	"github.com/mkube/mkube/internal/cronschedule"
)

// CronJobs create a Job from spec.jobTemplate at each time of
// spec.schedule ("*/1 * * * *": every minute); the cronjob controller
// does the work. The server checks that the schedule parses, that the
// time zone exists and that the template is a valid Job's.
var CronJobs = &apiserver.Resource{
	GroupVersion: batchv1.SchemeGroupVersion, Name: "cronjobs", Kind: "CronJob", Namespaced: true,
	ShortNames: []string{"cj"}, Categories: []string{"all"}, Columns: cronJobColumns, Row: cronJobRow,
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	// Kubernetes' status strategy keeps only the spec: labels and
	// annotations written with the status are kept.
	StatusWritesMetadata: true,
	New:                  func() runtime.Object { return &batchv1.CronJob{} },
	NewList:              func() runtime.Object { return &batchv1.CronJobList{} },
	PrepareForCreate:     func(obj runtime.Object) { obj.(*batchv1.CronJob).Status = batchv1.CronJobStatus{} },
	Default:              func(obj runtime.Object) { defaultCronJob(obj.(*batchv1.CronJob)) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		if old == nil {
			return validateCronJobCreate(obj.(*batchv1.CronJob))
		}
		return validateCronJobSpec(&obj.(*batchv1.CronJob).Spec, &old.(*batchv1.CronJob).Spec)
	},
	WriteStep: core.WorkloadWriteStep,
}

// cronJobColumns are kube-apiserver's CronJob printer columns.
var cronJobColumns = append([]apiserver.Column{
	{Name: "Schedule", Type: "string"}, {Name: "Timezone", Type: "string"}, {Name: "Suspend", Type: "boolean"},
	{Name: "Active", Type: "integer"}, {Name: "Last Schedule", Type: "string"}, {Name: "Age", Type: "string"},
}, core.WorkloadWideColumns...)

func cronJobRow(obj runtime.Object, now time.Time) []any {
	cj := obj.(*batchv1.CronJob)
	last := "<none>"
	if t := cj.Status.LastScheduleTime; t != nil {
		last = apiserver.Age(*t, now)
	}
	suspend := "<unset>"
	if cj.Spec.Suspend != nil {
		suspend = map[bool]string{true: "True", false: "False"}[*cj.Spec.Suspend]
	}
	names, images := core.ContainersAndImages(&cj.Spec.JobTemplate.Spec.Template.Spec)
	return []any{cj.Spec.Schedule, ptr.Deref(cj.Spec.TimeZone, "<none>"), suspend, int64(len(cj.Status.Active)), last,
		apiserver.Age(cj.CreationTimestamp, now), names, images, core.SelectorString(cj.Spec.JobTemplate.Spec.Selector)}
}

// defaultCronJob is Kubernetes' batch/v1 defaulting of a CronJob
// (SetObjectDefaults_CronJob): Allow concurrent runs, not suspended, keep
// three succeeded and one failed Job, and default the pod template as
// every pod template. The Job's own defaults (parallelism, backoffLimit,
// ...) are not applied here: the Jobs the controller creates get them.
func defaultCronJob(cj *batchv1.CronJob) {
	s := &cj.Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	if p := s.JobTemplate.Spec.PodFailurePolicy; p != nil {
		for i := range p.Rules {
			for j := range p.Rules[i].OnPodConditions {
				if c := &p.Rules[i].OnPodConditions[j]; c.Status == "" {
					c.Status = corev1.ConditionTrue
				}
			}
		}
	}
	core.DefaultPodSpec(&s.JobTemplate.Spec.Template.Spec)
}

// cronJobMaxNameLength: the controller names each Job
// "<cronjob>-<minutes since the epoch>", an 11-character suffix, and a
// Job's name must fit a 63-character label, so a CronJob's name is at
// most 52 characters. Checked on create only, so that older, longer
// CronJobs can still be updated and deleted.
const cronJobMaxNameLength = validation.DNS1035LabelMaxLength - 11

func validateCronJobCreate(cj *batchv1.CronJob) field.ErrorList {
	errs := validateCronJobSpec(&cj.Spec, nil)
	if len(cj.Name) > cronJobMaxNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cj.Name, fmt.Sprintf("must be no more than %d characters", cronJobMaxNameLength)))
	}
	return errs
}

// validateCronJobSpec is Kubernetes' validateCronJobSpec; old is nil on
// create.
func validateCronJobSpec(spec, old *batchv1.CronJobSpec) field.ErrorList {
	path := field.NewPath("spec")
	var errs field.ErrorList
	if spec.Schedule == "" {
		errs = append(errs, field.Required(path.Child("schedule"), ""))
	} else {
		// A schedule that already named its time zone may keep doing so.
		allowTZ := old != nil && cronschedule.HasTimeZone(old.Schedule)
		errs = append(errs, validateCronJobSchedule(spec.Schedule, allowTZ, spec.TimeZone, path.Child("schedule"))...)
	}
	if spec.StartingDeadlineSeconds != nil {
		errs = append(errs, cronJobNonNegative(*spec.StartingDeadlineSeconds, path.Child("startingDeadlineSeconds"))...)
	}
	if old == nil || !ptr.Equal(old.TimeZone, spec.TimeZone) {
		errs = append(errs, validateCronJobTimeZone(spec.TimeZone, path.Child("timeZone"))...)
	}
	switch spec.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(path.Child("concurrencyPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(path.Child("concurrencyPolicy"), spec.ConcurrencyPolicy,
			[]batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}))
	}
	var oldTemplate *batchv1.JobTemplateSpec
	if old != nil {
		oldTemplate = &old.JobTemplate
	}
	// The template is a valid Job's spec, less the selector, which is
	// generated for each Job the controller creates.
	errs = append(errs, ValidateJobTemplateSpec(&spec.JobTemplate, oldTemplate, path.Child("jobTemplate"))...)
	if spec.SuccessfulJobsHistoryLimit != nil {
		errs = append(errs, cronJobNonNegative(int64(*spec.SuccessfulJobsHistoryLimit), path.Child("successfulJobsHistoryLimit"))...)
	}
	if spec.FailedJobsHistoryLimit != nil {
		errs = append(errs, cronJobNonNegative(int64(*spec.FailedJobsHistoryLimit), path.Child("failedJobsHistoryLimit"))...)
	}
	return errs
}

// validateCronJobSchedule: the schedule must parse as the controller will
// parse it, and may not name a time zone ("TZ=..." or "CRON_TZ=...") now
// that spec.timeZone exists, unless it already did (allowTZ).
func validateCronJobSchedule(schedule string, allowTZ bool, timeZone *string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := cronschedule.Parse(schedule); err != nil {
		errs = append(errs, field.Invalid(path, schedule, err.Error()))
	}
	switch hasTZ := cronschedule.HasTimeZone(schedule); {
	case allowTZ && hasTZ && timeZone != nil:
		errs = append(errs, field.Invalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && hasTZ:
		errs = append(errs, field.Invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

// cronJobTimeZoneComponent is one part of an IANA time zone name
// ("America", "Argentina", "Buenos_Aires"): letters, '.', '-', '_', at
// most 14 characters; digits and '+' are tolerated for the legacy names
// ("Etc/GMT+5"). Kubernetes checks this before loading the zone, so that
// a name like "../../etc/passwd" never reaches the file system.
var cronJobTimeZoneComponent = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// validateCronJobTimeZone: nil, or an IANA time zone this server knows
// ("Europe/Paris"), never "Local", which would mean the controller
// manager's, whatever that is.
func validateCronJobTimeZone(tz *string, path *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(path, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !cronJobTimeZoneComponent.MatchString(part) {
			return field.ErrorList{field.Invalid(path, tz, fmt.Sprintf("unknown time zone %s", *tz))}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, field.Invalid(path, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, field.Invalid(path, tz, err.Error())) // "unknown time zone Mars/Olympus"
	}
	return errs
}

func cronJobNonNegative(v int64, path *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(path, v, "must be greater than or equal to 0")}
	}
	return nil
}
