package cronjob

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/testserver"
)

// The whole controller against a real API server, the server and the
// controller on one fake clock: time passes only when the test steps it,
// and each step fires the wake-up the controller asked for with AddAfter.
func TestControllerWakesAtEachScheduleTime(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0.Add(30 * time.Second))
	s := testserver.StartServer(t, func(cfg *apiserver.Config) { cfg.Clock = clk })
	c := client.New(s.URL, "cronjob-test")
	var logs testserver.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d := controller.NewDeps(c, log, clk)
	ctrl := New(d, Options{Workers: 2})
	testserver.Background(t, d.Run)
	testserver.Background(t, ctrl.Run)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	ctx := context.Background()

	cj := testCronJob()
	cj.UID, cj.ResourceVersion, cj.CreationTimestamp = "", "", metav1.Time{}
	if err := c.Create(ctx, client.CronJobs, "default", cj, cj); err != nil {
		t.Fatal(err)
	}
	// The first sync finds nothing due and asks to wake at 10:01:00.1.
	waitForWakeup(t, ctrl, minute(1).Add(nextScheduleDelta))

	clk.SetTime(minute(1).Add(nextScheduleDelta))
	first := jobName(cj, minute(1))
	cj = waitForCronJob(t, c, "the Job of 10:01 is active and lastScheduleTime is 10:01", func(cj *batchv1.CronJob) bool {
		return slices.Equal(names(cj.Status.Active), []string{first}) && cj.Status.LastScheduleTime.Time.Equal(minute(1))
	})
	job := &batchv1.Job{}
	if err := c.Get(ctx, client.Jobs, "default", first, job); err != nil {
		t.Fatalf("the Job of 10:01: %v", err)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != cj.UID {
		t.Errorf("job %s is not controlled by the CronJob: %+v", first, job.OwnerReferences)
	}
	waitForWakeup(t, ctrl, minute(2).Add(nextScheduleDelta))

	// Events are named after the clock's nanoseconds: move it, or the
	// next event would be refused as a duplicate of the last.
	clk.Step(time.Second)
	// Someone deletes the running Job: the Job informer's delete wakes
	// the CronJob, which drops the Job from status.active.
	background := metav1.DeletePropagationBackground
	if err := c.Delete(ctx, client.Jobs, "default", first, &metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	waitForCronJob(t, c, "the deleted Job leaves status.active", func(cj *batchv1.CronJob) bool { return len(cj.Status.Active) == 0 })

	// Suspended, the CronJob lets its wake-up at 10:02 pass.
	patch := []byte(`{"spec":{"suspend":true}}`)
	if err := c.Patch(ctx, client.CronJobs, "default", "hello", types.MergePatchType, patch, nil); err != nil {
		t.Fatal(err)
	}
	suspendedSyncs := func(n int) {
		testserver.Eventually(t, fmt.Sprintf("%d syncs of the suspended CronJob", n), func() (bool, string) {
			got := strings.Count(logs.String(), "suspended, not starting jobs")
			return got >= n, fmt.Sprint(got)
		})
	}
	suspendedSyncs(1) // the update
	clk.SetTime(minute(4).Add(10 * time.Second))
	suspendedSyncs(2) // the wake-up of 10:02
	var jobs batchv1.JobList
	if err := c.List(ctx, client.Jobs, "default", client.ListOptions{}, &jobs); err != nil || len(jobs.Items) != 0 {
		t.Fatalf("jobs while suspended: %d (%v), want none", len(jobs.Items), err)
	}

	// Resumed at 10:04:10, it runs the most recent time, 10:04, once:
	// not 10:02 and 10:03, the times it slept through.
	patch = []byte(`{"spec":{"suspend":false}}`)
	clk.Step(time.Second)
	if err := c.Patch(ctx, client.CronJobs, "default", "hello", types.MergePatchType, patch, nil); err != nil {
		t.Fatal(err)
	}
	resumed := jobName(cj, minute(4))
	waitForCronJob(t, c, "the Job of 10:04 runs on resume", func(cj *batchv1.CronJob) bool {
		return slices.Equal(names(cj.Status.Active), []string{resumed})
	})
	if err := c.List(ctx, client.Jobs, "default", client.ListOptions{}, &jobs); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("after resuming: %d jobs (%v), want only %s", len(jobs.Items), err, resumed)
	}

	testserver.Eventually(t, "the controller's events", func() (bool, string) {
		var events corev1.EventList
		if err := c.List(ctx, client.Events, "default", client.ListOptions{}, &events); err != nil {
			return false, err.Error()
		}
		var got []string
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "CronJob" && e.Source.Component == "cronjob-controller" {
				got = append(got, e.Reason+": "+e.Message)
			}
		}
		slices.Sort(got)
		want := []string{"MissingJob: Active job went missing: " + first, "SuccessfulCreate: Created job " + first, "SuccessfulCreate: Created job " + resumed}
		return slices.Equal(got, want), fmt.Sprint(got)
	})
}

// waitForWakeup waits until the controller has asked to be woken at at.
func waitForWakeup(t *testing.T, c *Controller, at time.Time) {
	t.Helper()
	testserver.Eventually(t, "a wake-up at "+at.Format(time.StampMilli), func() (bool, string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		got := c.wakeups["default/hello"]
		return got.Equal(at), got.Format(time.StampMilli)
	})
}

func waitForCronJob(t *testing.T, c *client.Client, what string, cond func(*batchv1.CronJob) bool) *batchv1.CronJob {
	t.Helper()
	var cj *batchv1.CronJob
	testserver.Eventually(t, what, func() (bool, string) {
		cj = &batchv1.CronJob{} // decoding into a used one would keep the fields the answer omits
		if err := c.Get(context.Background(), client.CronJobs, "default", "hello", cj); err != nil {
			return false, err.Error()
		}
		return cond(cj), fmt.Sprintf("active %v, lastScheduleTime %v", names(cj.Status.Active), cj.Status.LastScheduleTime)
	})
	return cj
}
