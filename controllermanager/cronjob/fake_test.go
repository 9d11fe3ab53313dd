package cronjob

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fakeAPI answers the controller's requests from memory and records its
// writes.
type fakeAPI struct {
	mu        sync.Mutex
	cronJob   *batchv1.CronJob        // what GetCronJob returns; nil is NotFound
	jobs      map[string]*batchv1.Job // by name: what GetJob finds
	createErr error                   // answers every CreateJob
	deleteErr error                   // answers every DeleteJob
	created   []string                // Job names, in order
	deleted   []string                // Job names, in order
	statuses  []batchv1.CronJobStatus // every UpdateStatus
}

var jobsResource = batchv1.Resource("jobs")

func (f *fakeAPI) GetCronJob(_ context.Context, _, name string) (*batchv1.CronJob, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cronJob == nil {
		return nil, apierrors.NewNotFound(batchv1.Resource("cronjobs"), name)
	}
	return f.cronJob.DeepCopy(), nil
}

func (f *fakeAPI) UpdateStatus(_ context.Context, cj *batchv1.CronJob) (*batchv1.CronJob, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses = append(f.statuses, *cj.Status.DeepCopy())
	return cj, nil
}

func (f *fakeAPI) GetJob(_ context.Context, _, name string) (*batchv1.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if job, ok := f.jobs[name]; ok {
		return job.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(jobsResource, name)
}

func (f *fakeAPI) CreateJob(_ context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createErr != nil {
		return nil, f.createErr
	}
	if _, ok := f.jobs[job.Name]; ok {
		return nil, apierrors.NewAlreadyExists(jobsResource, job.Name)
	}
	out := job.DeepCopy()
	out.UID, out.ResourceVersion = types.UID("uid-"+job.Name), "7"
	if f.jobs == nil {
		f.jobs = map[string]*batchv1.Job{}
	}
	f.jobs[job.Name] = out
	f.created = append(f.created, job.Name)
	return out.DeepCopy(), nil
}

func (f *fakeAPI) DeleteJob(_ context.Context, _, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.deleteErr != nil {
		return f.deleteErr
	}
	delete(f.jobs, name)
	f.deleted = append(f.deleted, name)
	return nil
}

// fakeRecorder keeps each event as "Type Reason message".
type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *fakeRecorder) Event(_ runtime.Object, eventType, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

// newTestController is a controller with no informers, for calling
// syncCronJob and cleanupFinishedJobs directly.
func newTestController(a api, now time.Time) (*Controller, *fakeRecorder, *clocktesting.FakeClock) {
	rec, clk := &fakeRecorder{}, clocktesting.NewFakeClock(now)
	return &Controller{api: a, rec: rec, log: slog.New(slog.DiscardHandler), clock: clk, wakeups: map[string]time.Time{}}, rec, clk
}

// t0 is 10:00 UTC on 1 May 2024; minute(n) is n minutes later.
var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func minute(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

// testCronJob is `kubectl create cronjob hello --image=busybox
// --schedule='*/1 * * * *' -- sh -c 'exit 0'` as stored, created at
// 10:00:30.
func testCronJob() *batchv1.CronJob {
	return &batchv1.CronJob{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", UID: "cj-uid", ResourceVersion: "5",
			CreationTimestamp: metav1.NewTime(t0.Add(30 * time.Second))},
		Spec: batchv1.CronJobSpec{
			Schedule: "*/1 * * * *", ConcurrencyPolicy: batchv1.AllowConcurrent, Suspend: ptr.To(false),
			SuccessfulJobsHistoryLimit: ptr.To[int32](3), FailedJobsHistoryLimit: ptr.To[int32](1),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers:    []corev1.Container{{Name: "hello", Image: "busybox", Command: []string{"sh", "-c", "exit 0"}}},
				}}},
			},
		},
	}
}

// ownedJob is the Job the CronJob created for the time at, started then;
// finished is "", Complete or Failed, finishing 30 seconds later.
func ownedJob(cj *batchv1.CronJob, at time.Time, finished batchv1.JobConditionType) *batchv1.Job {
	job, err := newJob(cj, at)
	if err != nil {
		panic(err)
	}
	job.UID, job.ResourceVersion = types.UID("uid-"+job.Name), "3"
	job.Status.StartTime = &metav1.Time{Time: at}
	if finished != "" {
		done := metav1.NewTime(at.Add(30 * time.Second))
		job.Status.Conditions = []batchv1.JobCondition{{Type: finished, Status: corev1.ConditionTrue}}
		if finished == batchv1.JobComplete {
			job.Status.CompletionTime = &done
		}
	}
	return job
}

// withActive puts jobs in the CronJob's status.active.
func withActive(cj *batchv1.CronJob, jobs ...*batchv1.Job) {
	for _, j := range jobs {
		cj.Status.Active = append(cj.Status.Active, jobRef(j))
	}
}

func names(refs []corev1.ObjectReference) []string {
	out := []string{}
	for _, r := range refs {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}
