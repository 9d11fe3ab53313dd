package batch

import (
	"math"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// newJob is a Job as `kubectl create job pi --image=busybox` sends it,
// before the server has touched it.
func newJob(mutate ...func(*batchv1.Job)) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default", UID: "uid-1"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "pi", Image: "busybox"}},
		}}},
	}
	for _, m := range mutate {
		m(job)
	}
	return job
}

// created is job as the server stores it: prepared, then defaulted.
func created(job *batchv1.Job) *batchv1.Job {
	prepareJobForCreate(job)
	DefaultJob(job)
	return job
}

func TestJobDefaults(t *testing.T) {
	tests := []struct {
		name  string
		job   *batchv1.Job
		check func(*batchv1.JobSpec) bool
	}{
		{"a Job that says neither completions nor parallelism runs one pod to one success",
			newJob(), func(s *batchv1.JobSpec) bool { return *s.Completions == 1 && *s.Parallelism == 1 }},
		{"parallelism alone leaves completions unset: the Job ends at its first success",
			newJob(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](3) }),
			func(s *batchv1.JobSpec) bool { return s.Completions == nil && *s.Parallelism == 3 }},
		{"completions alone gets parallelism 1",
			newJob(func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](5) }),
			func(s *batchv1.JobSpec) bool { return *s.Completions == 5 && *s.Parallelism == 1 }},
		{"backoffLimit is 6",
			newJob(), func(s *batchv1.JobSpec) bool { return *s.BackoffLimit == 6 }},
		{"with a limit per index the Job-wide backoffLimit is unlimited",
			newJob(func(j *batchv1.Job) { j.Spec.BackoffLimitPerIndex = ptr.To[int32](1) }),
			func(s *batchv1.JobSpec) bool { return *s.BackoffLimit == math.MaxInt32 }},
		{"completionMode NonIndexed, suspend false, manualSelector false",
			newJob(), func(s *batchv1.JobSpec) bool {
				return *s.CompletionMode == batchv1.NonIndexedCompletion && !*s.Suspend && !*s.ManualSelector
			}},
		{"pods are replaced once terminating or failed",
			newJob(), func(s *batchv1.JobSpec) bool { return *s.PodReplacementPolicy == batchv1.TerminatingOrFailed }},
		{"with a pod failure policy pods are replaced only once failed, and a condition pattern's status is True",
			newJob(func(j *batchv1.Job) {
				j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
					OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}}}}
			}),
			func(s *batchv1.JobSpec) bool {
				return *s.PodReplacementPolicy == batchv1.Failed && s.PodFailurePolicy.Rules[0].OnPodConditions[0].Status == corev1.ConditionTrue
			}},
		{"the pod template gets the pod defaults",
			newJob(), func(s *batchv1.JobSpec) bool { return *s.Template.Spec.TerminationGracePeriodSeconds == 30 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := created(tt.job)
			if !tt.check(&job.Spec) {
				t.Errorf("unexpected defaults: %+v", job.Spec)
			}
		})
	}
}

func TestJobGeneratedSelector(t *testing.T) {
	job := created(newJob())
	want := map[string]string{"batch.kubernetes.io/controller-uid": "uid-1", "batch.kubernetes.io/job-name": "pi",
		"controller-uid": "uid-1", "job-name": "pi"}
	for k, v := range want {
		if job.Spec.Template.Labels[k] != v {
			t.Errorf("template label %s=%q, want %q", k, job.Spec.Template.Labels[k], v)
		}
		if job.Labels[k] != v {
			t.Errorf("a Job without labels wears its template's: %s=%q, want %q", k, job.Labels[k], v)
		}
	}
	if got := metav1.FormatLabelSelector(job.Spec.Selector); got != "batch.kubernetes.io/controller-uid=uid-1" {
		t.Errorf("selector %s, want the controller-uid alone", got)
	}
	if errs := ValidateJobCreate(job); len(errs) > 0 {
		t.Errorf("the generated selector is invalid: %v", errs)
	}

	manual := created(newJob(func(j *batchv1.Job) {
		j.Spec.ManualSelector = ptr.To(true)
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}}
		j.Spec.Template.Labels = map[string]string{"app": "pi"}
	}))
	if len(manual.Spec.Template.Labels) != 1 || len(manual.Spec.Selector.MatchLabels) != 1 {
		t.Errorf("a manual selector is the user's: %v, %v", manual.Spec.Template.Labels, manual.Spec.Selector)
	}
}

// errorsAre checks an error list against "field: message fragment" pairs.
func errorsAre(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		f, msg, _ := strings.Cut(w, ": ")
		if errs[i].Field != f || !strings.Contains(errs[i].Error(), msg) {
			t.Errorf("error %d: %q, want %s: %q", i, errs[i].Error(), f, msg)
		}
	}
}

func TestJobCreateValidation(t *testing.T) {
	exitCodes := func(op batchv1.PodFailurePolicyOnExitCodesOperator, v ...int32) *batchv1.PodFailurePolicyOnExitCodesRequirement {
		return &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: v}
	}
	policy := func(rules ...batchv1.PodFailurePolicyRule) func(*batchv1.Job) {
		return func(j *batchv1.Job) { j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: rules} }
	}
	indexed := func(completions int32) func(*batchv1.Job) {
		return func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			j.Spec.Completions = ptr.To(completions)
		}
	}
	tests := []struct {
		name string
		job  *batchv1.Job
		want []string
	}{
		{"a Job as kubectl create job sends it is valid", newJob(), nil},
		{"a template that restarts Always would never end",
			newJob(func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = "" }),
			[]string{`spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`}},
		{"a pod failure policy needs restartPolicy Never",
			newJob(func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
				policy(batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: exitCodes("In", 1)})),
			[]string{`spec.template.spec.restartPolicy: only "Never" is supported when podFailurePolicy is specified`}},
		{"negative counts are invalid",
			newJob(func(j *batchv1.Job) {
				j.Spec.Parallelism, j.Spec.ActiveDeadlineSeconds = ptr.To[int32](-1), ptr.To[int64](-2)
			}),
			[]string{"spec.parallelism: must be greater than or equal to 0", "spec.activeDeadlineSeconds: must be greater than or equal to 0"}},
		{"an Indexed Job needs completions",
			newJob(func(j *batchv1.Job) {
				j.Spec.CompletionMode, j.Spec.Parallelism = ptr.To(batchv1.IndexedCompletion), ptr.To[int32](2)
			}),
			[]string{"spec.completions: Required value: when completion mode is Indexed"}},
		{"an unknown completion mode is not supported",
			newJob(func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.CompletionMode("Sometimes")) }),
			[]string{`spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"`}},
		{"a limit per index needs an Indexed Job",
			newJob(func(j *batchv1.Job) { j.Spec.BackoffLimitPerIndex = ptr.To[int32](1) }),
			[]string{"spec.backoffLimitPerIndex: requires indexed completion mode"}},
		{"maxFailedIndexes needs backoffLimitPerIndex, and at most completions",
			newJob(indexed(2), func(j *batchv1.Job) { j.Spec.MaxFailedIndexes = ptr.To[int32](3) }),
			[]string{"spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified", "spec.maxFailedIndexes: must be less than or equal to completions"}},
		{"an Indexed Job's last hostname must be a DNS label",
			newJob(indexed(2), func(j *batchv1.Job) { j.Name = strings.Repeat("a", 62); j.Spec.Template.Labels = nil }),
			[]string{"metadata.name: will not able to create pod with invalid DNS label: " + strings.Repeat("a", 62) + "-1"}},
		{"a user label that overrides a generated one is an error",
			newJob(func(j *batchv1.Job) { j.Spec.Template.Labels = map[string]string{"job-name": "other"} }),
			[]string{"spec.template.metadata.labels[job-name]: must be 'pi'"}},
		{"a selector that does not select the generated labels was not generated",
			newJob(func(j *batchv1.Job) {
				j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}}
				j.Spec.Template.Labels = map[string]string{"app": "pi"}
			}),
			[]string{"spec.selector: `selector` not auto-generated"}},
		{"a manual selector must match the template",
			newJob(func(j *batchv1.Job) {
				j.Spec.ManualSelector = ptr.To(true)
				j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}}
			}),
			[]string{"spec.template.metadata.labels: `selector` does not match template `labels`"}},
		{"a FailJob rule on exit codes In 1 is valid",
			newJob(policy(batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: exitCodes("In", 1)})), nil},
		{"exit code rules: In 0 is meaningless, codes are distinct and ordered",
			newJob(policy(batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: exitCodes("In", 0, 3, 3, 2)})),
			[]string{"spec.podFailurePolicy.rules[0].onExitCodes.values[0]: must not be 0 for the In operator",
				"spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
				"spec.podFailurePolicy.rules[0].onExitCodes.values: must be ordered"}},
		{"a rule needs an action and one kind of requirement",
			newJob(policy(batchv1.PodFailurePolicyRule{})),
			[]string{`spec.podFailurePolicy.rules[0].action: Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]`,
				"spec.podFailurePolicy.rules[0]: specifying one of OnExitCodes and OnPodConditions is required"}},
		{"FailIndex needs a limit per index",
			newJob(policy(batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: exitCodes("NotIn", 0)})),
			[]string{"spec.podFailurePolicy.rules[0].action: requires the backoffLimitPerIndex to be set"}},
		{"an exit code rule names a container of the template",
			newJob(policy(batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionIgnore,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: ptr.To("nope"), Operator: "In", Values: []int32{42}}})),
			[]string{"spec.podFailurePolicy.rules[0].onExitCodes.containerName: must be one of the container or initContainer names in the pod template"}},
		{"a success policy needs an Indexed Job",
			newJob(func(j *batchv1.Job) {
				j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
			}),
			[]string{"spec.successPolicy: requires indexed completion mode"}},
		{"success policy rules are satisfiable by completions",
			newJob(indexed(3), func(j *batchv1.Job) {
				j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
					{SucceededIndexes: ptr.To("0,3")}, {SucceededIndexes: ptr.To("0-1"), SucceededCount: ptr.To[int32](3)}, {}}}
			}),
			[]string{`spec.successPolicy.rules[0].succeededIndexes: error parsing succeededIndexes: too large index: "3"`,
				"spec.successPolicy.rules[1].succeededCount: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)",
				"spec.successPolicy.rules[2]: Required value: at least one of succeededCount or succeededIndexes must be specified"}},
		{"with a pod failure policy, pods are replaced only once failed",
			newJob(policy(batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: exitCodes("In", 1)}),
				func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed) }),
			[]string{`spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errorsAre(t, ValidateJobCreate(created(tt.job)), tt.want)
		})
	}
}

func TestJobUpdateValidation(t *testing.T) {
	running := created(newJob(func(j *batchv1.Job) { j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](4), ptr.To[int32](2) }))
	running.Status = batchv1.JobStatus{StartTime: &metav1.Time{Time: time.Unix(100, 0)}, Active: 2}
	suspendedNew := created(newJob(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }))
	indexedJob := created(newJob(func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](4), ptr.To[int32](4)
	}))
	tests := []struct {
		name   string
		old    *batchv1.Job
		change func(*batchv1.Job)
		want   []string
	}{
		{"parallelism may change", running, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](5) }, nil},
		{"suspend may change", running, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }, nil},
		{"completions of a NonIndexed Job are fixed", running, func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](5) },
			[]string{"spec.completions: field is immutable"}},
		{"an Indexed Job scales completions and parallelism together", indexedJob,
			func(j *batchv1.Job) { j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](6), ptr.To[int32](6) }, nil},
		{"an Indexed Job's completions alone cannot change", indexedJob, func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](6) },
			[]string{"spec.completions: can only be modified in tandem with spec.parallelism"}},
		{"the selector is fixed", running, func(j *batchv1.Job) { j.Spec.Selector.MatchLabels["x"] = "y"; j.Spec.Template.Labels["x"] = "y" },
			[]string{"spec.selector: field is immutable", "spec.template: field is immutable"}},
		{"a running Job's template is fixed", running, func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "nginx" },
			[]string{"spec.template: field is immutable"}},
		{"a suspended Job that never started may change its scheduling directives", suspendedNew,
			func(j *batchv1.Job) { j.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"} }, nil},
		{"a suspended Job that never started may change its containers' resources", suspendedNew,
			func(j *batchv1.Job) {
				j.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: *resourceQuantity("1")}
			}, nil},
		{"but not its image", suspendedNew, func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "nginx" },
			[]string{"spec.template.spec: field is immutable"}},
		{"the pod failure policy is fixed", running, func(j *batchv1.Job) {
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: "Ignore",
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: "True"}}}}}
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		}, []string{"spec.podFailurePolicy: field is immutable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := tt.old.DeepCopy()
			tt.change(next)
			DefaultJob(next)
			errorsAre(t, ValidateJobUpdate(next, tt.old), tt.want)
		})
	}
}

func TestJobStatusValidation(t *testing.T) {
	start, end := &metav1.Time{Time: time.Unix(100, 0)}, &metav1.Time{Time: time.Unix(200, 0)}
	cond := func(t batchv1.JobConditionType) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue}
	}
	running := created(newJob())
	running.Status = batchv1.JobStatus{StartTime: start, Active: 1, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](0),
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}}
	indexedJob := created(newJob(func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Completions, j.Spec.BackoffLimitPerIndex = ptr.To[int32](4), ptr.To[int32](1)
	}))
	indexedJob.Status = running.Status
	tests := []struct {
		name   string
		old    *batchv1.Job
		status func(*batchv1.JobStatus)
		want   []string
	}{
		{"the controller counting a success is fine", running, func(s *batchv1.JobStatus) { s.Succeeded, s.Active, s.Ready = 1, 0, ptr.To[int32](0) }, nil},
		{"a custom condition is fine", running, func(s *batchv1.JobStatus) { s.Conditions = append(s.Conditions, cond("CustomConditionType")) }, nil},
		{"Complete needs SuccessCriteriaMet first, and a completionTime",
			running, func(s *batchv1.JobStatus) {
				s.Active, s.Ready, s.Conditions = 0, ptr.To[int32](0), []batchv1.JobCondition{cond(batchv1.JobComplete)}
			},
			[]string{"status.completionTime: Required value: completionTime is required for Complete jobs",
				"status.conditions: cannot set Complete=True condition without the SuccessCriteriaMet=true condition"}},
		{"a Complete Job has no active pods",
			running, func(s *batchv1.JobStatus) {
				s.Ready, s.CompletionTime = ptr.To[int32](0), end
				s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet), cond(batchv1.JobComplete)}
			},
			[]string{"status.active: active>0 is invalid for finished job"}},
		{"Failed needs FailureTarget first",
			running, func(s *batchv1.JobStatus) {
				s.Active, s.Ready, s.Conditions = 0, ptr.To[int32](0), []batchv1.JobCondition{cond(batchv1.JobFailed)}
			},
			[]string{"status.conditions: cannot set Failed=True condition without the FailureTarget=true condition"}},
		{"counters never go back", func() *batchv1.Job { j := running.DeepCopy(); j.Status.Failed = 2; return j }(),
			func(s *batchv1.JobStatus) { s.Failed = 1 }, []string{"status.failed: cannot decrease the failed counter"}},
		{"more ready pods than active ones is impossible", running, func(s *batchv1.JobStatus) { s.Ready = ptr.To[int32](2) },
			[]string{"status.ready: cannot set more ready pods than active"}},
		{"startTime of a running Job is fixed", running, func(s *batchv1.JobStatus) { s.StartTime = end },
			[]string{"status.startTime: field is immutable for unsuspended job once set"}},
		{"completed indexes are below completions, in order", indexedJob, func(s *batchv1.JobStatus) { s.CompletedIndexes = "2,1" },
			[]string{"status.completedIndexes: error parsing completedIndexes: non-increasing order, previous: 2, current: 1"}},
		{"an index cannot both succeed and fail", indexedJob, func(s *batchv1.JobStatus) { s.CompletedIndexes, s.FailedIndexes = "0-2", ptr.To("2") },
			[]string{"status.failedIndexes: failedIndexes and completedIndexes overlap at index: 2"}},
		{"a NonIndexed Job has no failed indexes", running, func(s *batchv1.JobStatus) { s.FailedIndexes = ptr.To("") },
			[]string{"status.failedIndexes: cannot set non-null failedIndexes when backoffLimitPerIndex is null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := tt.old.DeepCopy()
			tt.status(&next.Status)
			_, errs := updateJobStatus(tt.old, next, time.Time{})
			errorsAre(t, errs, tt.want)
		})
	}
}

func TestJobStatusWriteKeepsTheSpecAndTakesMetadata(t *testing.T) {
	old := created(newJob())
	next := old.DeepCopy()
	next.Spec.Parallelism = ptr.To[int32](9)
	next.Annotations = map[string]string{"patchedstatus": "true"}
	next.Status.Active = 1
	out, errs := updateJobStatus(old, next, time.Time{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	job := out.(*batchv1.Job)
	if *job.Spec.Parallelism != 1 || job.Annotations["patchedstatus"] != "true" || job.Status.Active != 1 {
		t.Errorf("status write: parallelism %d, annotations %v, active %d; want the old spec, the new annotations and status",
			*job.Spec.Parallelism, job.Annotations, job.Status.Active)
	}
}

func TestJobPrinter(t *testing.T) {
	now := time.Unix(1000, 0)
	at := func(s int64) *metav1.Time { return &metav1.Time{Time: time.Unix(s, 0)} }
	base := func(m func(*batchv1.Job)) *batchv1.Job {
		j := created(newJob())
		j.CreationTimestamp = *at(900)
		m(j)
		return j
	}
	tests := []struct {
		name                         string
		job                          *batchv1.Job
		status, completions, elapsed string
	}{
		{"a Job not started yet has no duration", base(func(j *batchv1.Job) {}), "Running", "0/1", ""},
		{"a running Job's duration runs to now", base(func(j *batchv1.Job) { j.Status.StartTime = at(940) }), "Running", "0/1", "60s"},
		{"a complete Job's duration ends at completionTime", base(func(j *batchv1.Job) {
			j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = at(940), at(950), 1
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: "True"}, {Type: batchv1.JobComplete, Status: "True"}}
		}), "Complete", "1/1", "10s"},
		{"a Job stopping at its first success shows its parallelism", base(func(j *batchv1.Job) {
			j.Spec.Completions, j.Spec.Parallelism = nil, ptr.To[int32](3)
		}), "Running", "0/1 of 3", ""},
		{"FailureTarget shows while the pods are stopped", base(func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: "True"}}
		}), "FailureTarget", "0/1", ""},
		{"Failed", base(func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: "True"}, {Type: batchv1.JobFailed, Status: "True"}}
		}), "Failed", "0/1", ""},
		{"Suspended", base(func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: "True"}}
		}), "Suspended", "0/1", ""},
		{"a Job being deleted is Terminating", base(func(j *batchv1.Job) { j.DeletionTimestamp = at(990) }), "Terminating", "0/1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := jobRow(tt.job, now)
			if row[0] != tt.status || row[1] != tt.completions || row[2] != tt.elapsed || row[3] != "100s" {
				t.Errorf("row %v, want %s %s %q 100s", row[:4], tt.status, tt.completions, tt.elapsed)
			}
			if row[4] != "pi" || row[5] != "busybox" || row[6] != "batch.kubernetes.io/controller-uid=uid-1" {
				t.Errorf("wide cells %v", row[4:])
			}
		})
	}
}

func resourceQuantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}
