package cronjob

import (
	"context"
	"errors"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
)

func TestCleanupFinishedJobs(t *testing.T) {
	// jobs makes one Job per character of outcomes, started a minute
	// apart from minute(1): 'c' Complete, 'f' Failed, 'r' running.
	jobs := func(cj *batchv1.CronJob, outcomes string) []*batchv1.Job {
		var out []*batchv1.Job
		for i, o := range outcomes {
			cond := map[rune]batchv1.JobConditionType{'c': batchv1.JobComplete, 'f': batchv1.JobFailed, 'r': ""}[o]
			out = append(out, ownedJob(cj, minute(i+1), cond))
		}
		return out
	}
	name := func(n int) string { return jobName(testCronJob(), minute(n)) }
	tests := []struct {
		name                string
		outcomes            string
		succeeded, failed   *int32
		shuffle, notStarted bool
		deleteErr           error
		wantDeleted         []string
		wantChanged         bool
	}{
		{name: "within the default limits, nothing is deleted", outcomes: "cccf", succeeded: ptr.To[int32](3), failed: ptr.To[int32](1)},
		{name: "past three successes, the oldest go", outcomes: "ccccc", succeeded: ptr.To[int32](3), failed: ptr.To[int32](1),
			wantDeleted: []string{name(1), name(2)}, wantChanged: true},
		{name: "past one failure, the older failures go and the successes stay", outcomes: "fcfcf", succeeded: ptr.To[int32](3), failed: ptr.To[int32](1),
			wantDeleted: []string{name(1), name(3)}, wantChanged: true},
		{name: "running Jobs are never history", outcomes: "rrrrc", succeeded: ptr.To[int32](0), failed: ptr.To[int32](0),
			wantDeleted: []string{name(5)}, wantChanged: true},
		{name: "a limit of zero keeps no finished Job", outcomes: "cf", succeeded: ptr.To[int32](0), failed: ptr.To[int32](0),
			wantDeleted: []string{name(1), name(2)}, wantChanged: true},
		{name: "no limits keep everything", outcomes: "ccccccff"},
		{name: "age is the start time, whatever the order of the list", outcomes: "cccc", succeeded: ptr.To[int32](2), shuffle: true,
			wantDeleted: []string{name(1), name(2)}, wantChanged: true},
		{name: "a Job that never started counts as the newest", outcomes: "ccc", succeeded: ptr.To[int32](2), notStarted: true,
			wantDeleted: []string{name(2)}, wantChanged: true},
		{name: "a failed delete changes nothing", outcomes: "cc", succeeded: ptr.To[int32](1), deleteErr: errors.New("forbidden")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cj := testCronJob()
			cj.Spec.SuccessfulJobsHistoryLimit, cj.Spec.FailedJobsHistoryLimit = tt.succeeded, tt.failed
			js := jobs(cj, tt.outcomes)
			if tt.notStarted {
				js[0].Status.StartTime = nil
			}
			if tt.shuffle {
				slices.Reverse(js)
			}
			f := &fakeAPI{jobs: map[string]*batchv1.Job{}, deleteErr: tt.deleteErr}
			for _, j := range js {
				f.jobs[j.Name] = j
			}
			c, rec, _ := newTestController(f, minute(10))
			changed := c.cleanupFinishedJobs(context.Background(), cj, js)
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			got := slices.Clone(f.deleted)
			slices.Sort(got)
			if !slices.Equal(got, tt.wantDeleted) {
				t.Errorf("deleted %v, want %v", got, tt.wantDeleted)
			}
			var want []string
			for _, n := range f.deleted {
				want = append(want, "Normal SuccessfulDelete Deleted job "+n)
			}
			if tt.deleteErr != nil {
				want = []string{"Warning FailedDelete Deleted job: forbidden"}
			}
			assertEvents(t, rec.events, want)
		})
	}
}
