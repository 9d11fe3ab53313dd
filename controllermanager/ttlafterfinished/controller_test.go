package ttlafterfinished

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/testserver"
)

// The tests run the controller's informer against a real API server and
// call sync by hand; the clock is fake, so a TTL passes when the test
// steps it.

func TestFinishedJobsAreDeletedWhenTheirTTLIsUp(t *testing.T) {
	tests := []struct {
		name     string
		ttl      *int32
		finished bool
		after    time.Duration // since the Job finished
		deleted  bool
	}{
		{"ttl 0 deletes a finished Job at once", ptr.To[int32](0), true, 0, true},
		{"a Job is kept until its TTL is up", ptr.To[int32](100), true, 99 * time.Second, false},
		{"and deleted once it is", ptr.To[int32](100), true, 100 * time.Second, true},
		{"a Job without a TTL is kept", nil, true, time.Hour, false},
		{"a running Job is kept whatever its TTL", ptr.To[int32](0), false, time.Hour, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client.New(testserver.Start(t), "ttl-test")
			finishedAt := time.Now().Truncate(time.Second)
			clk := clocktesting.NewFakeClock(finishedAt)
			d := controller.NewDeps(c, slog.New(slog.DiscardHandler), clk)
			ctrl := New(d, Options{})
			testserver.Background(t, d.Informers.Run)

			name := fmt.Sprintf("job%d", i)
			job := createJob(t, c, name, tt.ttl)
			if tt.finished {
				complete(t, c, job, finishedAt)
			}
			testserver.Eventually(t, "the cache has the Job", func() (bool, string) {
				obj, ok := ctrl.jobs.Cache().Get("default/" + name)
				return ok && obj.(*batchv1.Job).ResourceVersion == job.ResourceVersion, ""
			})
			clk.Step(tt.after)
			if err := ctrl.sync(context.Background(), "default/"+name); err != nil {
				t.Fatal(err)
			}
			got := &batchv1.Job{}
			if err := c.Get(context.Background(), client.Jobs, "default", name, got); err != nil {
				t.Fatal(err)
			}
			// Nothing collects its dependents here: a foreground deletion
			// leaves the Job terminating with the foregroundDeletion finalizer.
			deleted := got.DeletionTimestamp != nil && slices.Contains(got.Finalizers, metav1.FinalizerDeleteDependents)
			if deleted != tt.deleted {
				t.Errorf("deleted in the foreground: %v (deletionTimestamp %v, finalizers %v), want %v", deleted, got.DeletionTimestamp, got.Finalizers, tt.deleted)
			}
		})
	}
}

func createJob(t *testing.T, c *client.Client, name string, ttl *int32) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{TTLSecondsAfterFinished: ttl, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	if err := c.Create(context.Background(), client.Jobs, "default", job, job); err != nil {
		t.Fatal(err)
	}
	return job
}

// complete writes the status the job controller writes at the end.
func complete(t *testing.T, c *client.Client, job *batchv1.Job, at time.Time) {
	t.Helper()
	now := metav1.NewTime(at)
	job.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0),
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}}
	if err := c.UpdateStatus(context.Background(), client.Jobs, "default", job.Name, job, job); err != nil {
		t.Fatal(err)
	}
}
