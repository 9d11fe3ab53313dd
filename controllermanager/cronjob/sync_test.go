package cronjob

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestSyncCronJob(t *testing.T) {
	name := func(n int) string { return jobName(testCronJob(), minute(n)) }
	tests := []struct {
		name string
		// setup changes the CronJob and returns the Jobs that exist.
		setup func(cj *batchv1.CronJob) []*batchv1.Job
		now   time.Time
		// fresh is what a GET of the CronJob returns; nil: cj itself.
		fresh func(cj *batchv1.CronJob)
		// onServer are Jobs the server has and the cache has not seen.
		onServer  func(cj *batchv1.CronJob) []*batchv1.Job
		createErr error

		wantCreated, wantDeleted, wantActive []string
		wantEvents                           []string // each a prefix of one event, in order
		wantLastSchedule                     *time.Time
		wantLastSuccess                      *time.Time
		wantRequeue                          *time.Duration
		wantChanged, wantErr                 bool
	}{
		{
			name:  "nothing is due before the first schedule time",
			setup: func(*batchv1.CronJob) []*batchv1.Job { return nil },
			now:   t0.Add(50 * time.Second), wantRequeue: ptr.To(10*time.Second + nextScheduleDelta),
		},
		{
			name:        "at its time, a Job named after the time in minutes is created and recorded",
			setup:       func(*batchv1.CronJob) []*batchv1.Job { return nil },
			now:         minute(1).Add(2 * time.Second),
			wantCreated: []string{"hello-28575961"}, wantActive: []string{"hello-28575961"},
			wantEvents: []string{"Normal SuccessfulCreate Created job hello-28575961"}, wantLastSchedule: ptr.To(minute(1)),
			wantRequeue: ptr.To(58*time.Second + nextScheduleDelta), wantChanged: true,
		},
		{
			name: "a suspended CronJob creates nothing and sleeps until it is changed",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Spec.Suspend = ptr.To(true)
				return nil
			},
			now: minute(5),
		},
		{
			name: "Allow runs a new Job beside the one still running",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				running := ownedJob(cj, minute(1), "")
				withActive(cj, running)
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return []*batchv1.Job{running}
			},
			now:         minute(2),
			wantCreated: []string{name(2)}, wantActive: []string{name(1), name(2)},
			wantEvents:       []string{"Normal SuccessfulCreate Created job " + name(2)},
			wantLastSchedule: ptr.To(minute(2)), wantRequeue: ptr.To(time.Minute + nextScheduleDelta), wantChanged: true,
		},
		{
			name: "Forbid skips the run while the previous Job is running",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
				running := ownedJob(cj, minute(1), "")
				withActive(cj, running)
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return []*batchv1.Job{running}
			},
			now:        minute(2),
			wantActive: []string{name(1)},
			wantEvents: []string{"Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid"},
			// The skipped time stays unrecorded, so the next sync is the
			// one after the next schedule time, from now.
			wantLastSchedule: ptr.To(minute(1)), wantRequeue: ptr.To(time.Minute + nextScheduleDelta),
		},
		{
			name: "Forbid runs once the previous Job has finished",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
				done := ownedJob(cj, minute(1), batchv1.JobComplete)
				withActive(cj, done)
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return []*batchv1.Job{done}
			},
			now:         minute(2),
			wantCreated: []string{name(2)}, wantActive: []string{name(2)},
			wantEvents: []string{"Normal SawCompletedJob Saw completed job: " + name(1) + ", condition: Complete",
				"Normal SuccessfulCreate Created job " + name(2)},
			wantLastSchedule: ptr.To(minute(2)), wantLastSuccess: ptr.To(minute(1).Add(30 * time.Second)),
			wantRequeue: ptr.To(time.Minute + nextScheduleDelta), wantChanged: true,
		},
		{
			name: "Replace deletes the running Job and creates the new one",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent
				running := ownedJob(cj, minute(1), "")
				withActive(cj, running)
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return []*batchv1.Job{running}
			},
			now:         minute(2),
			wantDeleted: []string{name(1)}, wantCreated: []string{name(2)}, wantActive: []string{name(2)},
			wantEvents:       []string{"Normal SuccessfulDelete Deleted job " + name(1), "Normal SuccessfulCreate Created job " + name(2)},
			wantLastSchedule: ptr.To(minute(2)), wantRequeue: ptr.To(time.Minute + nextScheduleDelta), wantChanged: true,
		},
		{
			name: "a finished Job leaves status.active, and its completion is the last success",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				done := ownedJob(cj, minute(1), batchv1.JobComplete)
				withActive(cj, done)
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return []*batchv1.Job{done}
			},
			now:              minute(1).Add(50 * time.Second),
			wantEvents:       []string{"Normal SawCompletedJob Saw completed job: " + name(1) + ", condition: Complete"},
			wantLastSchedule: ptr.To(minute(1)), wantLastSuccess: ptr.To(minute(1).Add(30 * time.Second)),
			wantRequeue: ptr.To(10*time.Second + nextScheduleDelta), wantChanged: true,
		},
		{
			name: "a failed Job leaves status.active without being a success",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				failed := ownedJob(cj, minute(1), batchv1.JobFailed)
				withActive(cj, failed)
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return []*batchv1.Job{failed}
			},
			now:              minute(1).Add(30 * time.Second),
			wantEvents:       []string{"Normal SawCompletedJob Saw completed job: " + name(1) + ", condition: Failed"},
			wantLastSchedule: ptr.To(minute(1)), wantRequeue: ptr.To(30*time.Second + nextScheduleDelta), wantChanged: true,
		},
		{
			name: "a Job in status.active that was deleted is dropped with MissingJob",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				withActive(cj, ownedJob(cj, minute(1), ""))
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return nil
			},
			now:              minute(1).Add(30 * time.Second),
			wantEvents:       []string{"Normal MissingJob Active job went missing: " + name(1)},
			wantLastSchedule: ptr.To(minute(1)), wantRequeue: ptr.To(30*time.Second + nextScheduleDelta), wantChanged: true,
		},
		{
			name: "a running Job of ours that status.active does not name is unexpected",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return []*batchv1.Job{ownedJob(cj, minute(1), "")}
			},
			now:              minute(1).Add(30 * time.Second),
			wantEvents:       []string{"Warning UnexpectedJob Saw a job that the controller did not create or forgot: " + name(1)},
			wantLastSchedule: ptr.To(minute(1)), wantRequeue: ptr.To(30*time.Second + nextScheduleDelta),
		},
		{
			name: "unless the server's CronJob names it: the cache was only behind",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return []*batchv1.Job{ownedJob(cj, minute(1), "")}
			},
			fresh: func(cj *batchv1.CronJob) { withActive(cj, ownedJob(cj, minute(1), "")) },
			now:   minute(1).Add(30 * time.Second), wantActive: []string{name(1)},
			wantLastSchedule: ptr.To(minute(1)), wantRequeue: ptr.To(30*time.Second + nextScheduleDelta),
		},
		{
			name: "a time already run is not run again",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return nil
			},
			now:              minute(1).Add(time.Second),
			wantLastSchedule: ptr.To(minute(1)), wantRequeue: ptr.To(59*time.Second + nextScheduleDelta),
		},
		{
			name: "past the starting deadline, a late run is not started",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
				return nil
			},
			// The deadline hides 10:01 from the search, so nothing is due.
			now: minute(1).Add(20 * time.Second), wantRequeue: ptr.To(40*time.Second + nextScheduleDelta),
		},
		{
			name: "within the starting deadline, a late run still starts",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
				return nil
			},
			now:         minute(1).Add(20 * time.Second),
			wantCreated: []string{name(1)}, wantActive: []string{name(1)},
			wantEvents:       []string{"Normal SuccessfulCreate Created job " + name(1)},
			wantLastSchedule: ptr.To(minute(1)), wantRequeue: ptr.To(40*time.Second + nextScheduleDelta), wantChanged: true,
		},
		{
			name: "after more than 100 missed times the controller warns, and runs the most recent",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Status.LastScheduleTime = &metav1.Time{Time: minute(1)}
				return nil
			},
			now:         minute(200).Add(5 * time.Second),
			wantCreated: []string{name(200)}, wantActive: []string{name(200)},
			wantEvents: []string{"Warning TooManyMissedTimes too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
				"Normal SuccessfulCreate Created job " + name(200)},
			wantLastSchedule: ptr.To(minute(200)), wantRequeue: ptr.To(55*time.Second + nextScheduleDelta), wantChanged: true,
		},
		{
			name:     "a Job created before a crash, not yet recorded, is recorded and not created twice",
			setup:    func(*batchv1.CronJob) []*batchv1.Job { return nil },
			onServer: func(cj *batchv1.CronJob) []*batchv1.Job { return []*batchv1.Job{ownedJob(cj, minute(1), "")} },
			now:      minute(1).Add(time.Second), wantActive: []string{name(1)},
			wantLastSchedule: ptr.To(minute(1)), wantRequeue: ptr.To(59*time.Second + nextScheduleDelta), wantChanged: true,
		},
		{
			name:      "a refused create is an event and an error, retried",
			setup:     func(*batchv1.CronJob) []*batchv1.Job { return nil },
			createErr: errors.New("exceeded quota"),
			now:       minute(1), wantEvents: []string{"Warning FailedCreate Error creating job: exceeded quota"}, wantErr: true,
		},
		{
			name: "a time zone the server cannot load stops the CronJob with a warning",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Spec.TimeZone = ptr.To("Mars/Olympus")
				return nil
			},
			now:        minute(1),
			wantEvents: []string{`Warning UnknownTimeZone invalid timeZone: "Mars/Olympus": unknown time zone Mars/Olympus`},
		},
		{
			name: "a CronJob being deleted only has its status kept",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.DeletionTimestamp = &metav1.Time{Time: minute(1)}
				return nil
			},
			now: minute(5),
		},
		{
			name: "a schedule that never comes is an event, not a retry",
			setup: func(cj *batchv1.CronJob) []*batchv1.Job {
				cj.Spec.Schedule = "59 23 31 2 *"
				return nil
			},
			now:        minute(1),
			wantEvents: []string{"Warning InvalidSchedule invalid schedule: 59 23 31 2 * : time difference between two schedules is less than 1 second"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cj := testCronJob()
			jobs := tt.setup(cj)
			f := &fakeAPI{cronJob: cj.DeepCopy(), jobs: map[string]*batchv1.Job{}, createErr: tt.createErr}
			if tt.fresh != nil {
				tt.fresh(f.cronJob)
			}
			for _, j := range jobs {
				f.jobs[j.Name] = j
			}
			if tt.onServer != nil {
				for _, j := range tt.onServer(cj) {
					f.jobs[j.Name] = j
				}
			}
			c, rec, _ := newTestController(f, tt.now)

			requeue, changed, err := c.syncCronJob(context.Background(), cj, jobs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if changed != tt.wantChanged {
				t.Errorf("status changed = %v, want %v", changed, tt.wantChanged)
			}
			if got, want := ptr.Deref(requeue, -1), ptr.Deref(tt.wantRequeue, -1); got != want {
				t.Errorf("requeue after %v, want %v (-1: none)", got, want)
			}
			if !slices.Equal(f.created, tt.wantCreated) || !slices.Equal(f.deleted, tt.wantDeleted) {
				t.Errorf("created %v and deleted %v, want %v and %v", f.created, f.deleted, tt.wantCreated, tt.wantDeleted)
			}
			if got := names(cj.Status.Active); !slices.Equal(got, append([]string{}, tt.wantActive...)) {
				t.Errorf("status.active = %v, want %v", got, tt.wantActive)
			}
			assertTime(t, "lastScheduleTime", cj.Status.LastScheduleTime, tt.wantLastSchedule)
			assertTime(t, "lastSuccessfulTime", cj.Status.LastSuccessfulTime, tt.wantLastSuccess)
			assertEvents(t, rec.events, tt.wantEvents)
		})
	}
}

func assertTime(t *testing.T, what string, got *metav1.Time, want *time.Time) {
	t.Helper()
	if (got == nil) != (want == nil) || (got != nil && !got.Time.Equal(*want)) {
		var g *time.Time
		if got != nil {
			g = &got.Time
		}
		t.Errorf("%s = %s, want %s", what, fmtTime(g), fmtTime(want))
	}
}

func assertEvents(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("events %q, want %q", got, want)
		return
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("event %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestNewJob(t *testing.T) {
	cj := testCronJob()
	cj.Spec.JobTemplate.Annotations = map[string]string{"owner": "ops"}
	job, err := newJob(cj, minute(1))
	if err != nil {
		t.Fatal(err)
	}
	if job.Name != "hello-28575961" || job.Namespace != "default" {
		t.Errorf("job %s/%s, want default/hello-28575961", job.Namespace, job.Name)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.Kind != "CronJob" || ref.Name != "hello" || ref.UID != "cj-uid" || !*ref.BlockOwnerDeletion {
		t.Errorf("controller reference %+v, want the CronJob's, blocking its deletion", ref)
	}
	if job.Labels["team"] != "a" || job.Annotations["owner"] != "ops" {
		t.Errorf("labels %v, annotations %v: want the template's", job.Labels, job.Annotations)
	}
	if got := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != "2024-05-01T10:01:00Z" {
		t.Errorf("scheduled timestamp %q, want 2024-05-01T10:01:00Z (UTC without a time zone)", got)
	}
	if job.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Errorf("spec not the template's: %+v", job.Spec)
	}
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "changed"
	if job.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Error("the Job shares the template's memory")
	}

	cj.Spec.TimeZone = ptr.To("Asia/Tokyo")
	job, _ = newJob(cj, minute(1))
	if got := job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != "2024-05-01T19:01:00+09:00" {
		t.Errorf("scheduled timestamp in Tokyo %q, want 2024-05-01T19:01:00+09:00", got)
	}
}
