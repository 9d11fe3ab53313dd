package batch

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// Jobs run pods until enough of them succeed (spec.completions), or fail
// too often (spec.backoffLimit); the job controller creates the pods and
// counts how they end, the ttl-after-finished controller deletes a
// finished Job when its ttlSecondsAfterFinished is up.
//
// On create the server picks the Job's selector itself (unless
// spec.manualSelector): it labels the template with the Job's UID and
// name and selects on the UID, so no two Jobs ever share a pod.
var Jobs = &apiserver.Resource{
	GroupVersion: batchv1.SchemeGroupVersion, Name: "jobs", Kind: "Job", Namespaced: true,
	Categories: []string{"all"}, Columns: jobColumns, Row: jobRow,
	Subresources:     []apiserver.Subresource{apiserver.WritesSubresource("status", updateJobStatus)},
	New:              func() runtime.Object { return &batchv1.Job{} },
	NewList:          func() runtime.Object { return &batchv1.JobList{} },
	PrepareForCreate: func(obj runtime.Object) { prepareJobForCreate(obj.(*batchv1.Job)) },
	Default:          func(obj runtime.Object) { DefaultJob(obj.(*batchv1.Job)) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		if old == nil {
			return ValidateJobCreate(obj.(*batchv1.Job))
		}
		return ValidateJobUpdate(obj.(*batchv1.Job), old.(*batchv1.Job))
	},
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"status.successful": strconv.Itoa(int(obj.(*batchv1.Job).Status.Succeeded))}
	},
	WriteStep: core.WorkloadWriteStep,
}

// prepareJobForCreate is Kubernetes' job strategy's PrepareForCreate: no
// status yet, and the generated selector. The server has set the UID
// already; defaulting runs after this, so an unset manualSelector is read
// as its default, false.
func prepareJobForCreate(job *batchv1.Job) {
	job.Status = batchv1.JobStatus{}
	if !ptr.Deref(job.Spec.ManualSelector, false) {
		generateSelector(job)
	}
}

// The labels Jobs put on their pods before Kubernetes prefixed them with
// batch.kubernetes.io/; they are still set, for selectors written then.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// generateSelector labels the pod template with the Job's name and UID,
// under both the batch.kubernetes.io/ keys and the legacy unprefixed
// ones, and selects on batch.kubernetes.io/controller-uid: a UID is
// unique, so the Job only ever matches its own pods. Labels the user set
// are left alone; if they conflict, validation says so.
func generateSelector(job *batchv1.Job) {
	if job.Spec.Template.Labels == nil {
		job.Spec.Template.Labels = map[string]string{}
	}
	for key, value := range map[string]string{
		legacyJobNameLabel: job.Name, batchv1.JobNameLabel: job.Name,
		legacyControllerUIDLabel: string(job.UID), batchv1.ControllerUidLabel: string(job.UID),
	} {
		if _, set := job.Spec.Template.Labels[key]; !set {
			job.Spec.Template.Labels[key] = value
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, set := job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !set {
		job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(job.UID)
	}
}

// DefaultJob is Kubernetes' SetDefaults_Job, and the pod defaults of its
// template.
func DefaultJob(job *batchv1.Job) {
	DefaultJobSpec(&job.Spec)
	// Workload-aware scheduling (spec.scheduling) is alpha, behind the
	// WorkloadWithJob feature gate, which is off: the field is dropped,
	// as Kubernetes drops disabled fields.
	job.Spec.Scheduling = nil
	// A Job without labels of its own wears its template's, which after
	// create include the generated ones: why `kubectl describe job` shows
	// batch.kubernetes.io/job-name=NAME among the Job's labels.
	if job.Spec.Template.Labels != nil && len(job.Labels) == 0 {
		job.Labels = maps.Clone(job.Spec.Template.Labels)
	}
}

// DefaultJobSpec fills a Job spec as SetDefaults_Job does: a Job that says
// neither completions nor parallelism runs one pod to one success.
func DefaultJobSpec(spec *batchv1.JobSpec) {
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptr.To[int32](1)
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.BackoffLimit == nil {
		// With a limit per index, the Job-wide limit is not the one that
		// should stop it.
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
		} else {
			spec.BackoffLimit = ptr.To[int32](6)
		}
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.PodReplacementPolicy == nil {
		// A pod failure policy reads the failed pod's final status, so
		// its replacement waits until the pod has really failed.
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = ptr.To(false)
	}
	if spec.PodFailurePolicy != nil {
		for i := range spec.PodFailurePolicy.Rules {
			for j := range spec.PodFailurePolicy.Rules[i].OnPodConditions {
				if p := &spec.PodFailurePolicy.Rules[i].OnPodConditions[j]; p.Status == "" {
					p.Status = corev1.ConditionTrue
				}
			}
		}
	}
	core.DefaultPodSpec(&spec.Template.Spec)
}

// updateJobStatus is the job status strategy: the spec stays the stored
// one, metadata and status are the client's, and the status must tell a
// consistent story (validateJobStatusUpdate).
func updateJobStatus(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
	old, in := cur.(*batchv1.Job), next.(*batchv1.Job)
	out := old.DeepCopy()
	out.Labels, out.Annotations = in.Labels, in.Annotations
	out.Finalizers, out.OwnerReferences = in.Finalizers, in.OwnerReferences
	out.Status = in.Status
	return out, validateJobStatusUpdate(out, old)
}

// jobColumns are kube-apiserver's for Jobs.
var jobColumns = append([]apiserver.Column{
	{Name: "Status", Type: "string"}, {Name: "Completions", Type: "string"},
	{Name: "Duration", Type: "string"}, {Name: "Age", Type: "string"},
}, core.WorkloadWideColumns...)

// jobRow is kube-apiserver's printJob: STATUS is the first of Complete,
// Failed, Terminating, Suspended, FailureTarget, SuccessCriteriaMet that
// holds, else Running; COMPLETIONS is succeeded/completions ("0/1 of 3"
// for a Job that stops at its first success with 3 pods at once);
// DURATION runs from startTime to completionTime, or to now.
func jobRow(obj runtime.Object, now time.Time) []any {
	job := obj.(*batchv1.Job)
	var completions string
	switch parallelism := ptr.Deref(job.Spec.Parallelism, 0); {
	case job.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	case parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, parallelism)
	default:
		completions = fmt.Sprintf("%d/1", job.Status.Succeeded)
	}
	var took string
	switch {
	case job.Status.StartTime == nil:
	case job.Status.CompletionTime == nil:
		took = duration.HumanDuration(now.Sub(job.Status.StartTime.Time))
	default:
		took = duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
	}
	names, images := core.ContainersAndImages(&job.Spec.Template.Spec)
	return []any{jobStatusCell(job), completions, took, apiserver.Age(job.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(job.Spec.Selector)}
}

func jobStatusCell(job *batchv1.Job) string {
	switch has := func(t batchv1.JobConditionType) bool { return conditionTrue(job.Status.Conditions, t) }; {
	case has(batchv1.JobComplete):
		return "Complete"
	case has(batchv1.JobFailed):
		return "Failed"
	case job.DeletionTimestamp != nil:
		return "Terminating"
	case has(batchv1.JobSuspended):
		return "Suspended"
	case has(batchv1.JobFailureTarget):
		return "FailureTarget"
	case has(batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

// conditionTrue reports whether the first condition of type t is True,
// as kubectl's printer reads them.
func conditionTrue(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
