package cronjob

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/internal/cronschedule"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestMostRecentScheduleTime(t *testing.T) {
	utc := time.UTC
	newYork, tokyo := mustLoad(t, "America/New_York"), mustLoad(t, "Asia/Tokyo")
	at := func(loc *time.Location, month time.Month, day, hour, min, sec int) time.Time {
		return time.Date(2024, month, day, hour, min, sec, 0, loc)
	}
	tests := []struct {
		name             string
		schedule         string
		timeZone         *string
		created          time.Time
		last             *time.Time // status.lastScheduleTime
		deadline         *int64     // spec.startingDeadlineSeconds
		now              time.Time
		want             *time.Time
		wantMissed       missedSchedules
		wantErr          bool
		withoutDeadlines bool
	}{
		{name: "a new CronJob waits for its first time",
			schedule: "*/1 * * * *", created: at(utc, 5, 1, 10, 0, 30), now: at(utc, 5, 1, 10, 0, 50)},
		{name: "the first time has come",
			schedule: "*/1 * * * *", created: at(utc, 5, 1, 10, 0, 30), now: at(utc, 5, 1, 10, 1, 0),
			want: ptr.To(at(utc, 5, 1, 10, 1, 0))},
		{name: "after the last run, the next time is counted from it",
			schedule: "*/1 * * * *", created: at(utc, 5, 1, 9, 0, 0), last: ptr.To(at(utc, 5, 1, 10, 5, 0)), now: at(utc, 5, 1, 10, 5, 40)},
		{name: "several missed times: only the most recent runs",
			schedule: "*/5 * * * *", created: at(utc, 5, 1, 9, 0, 0), last: ptr.To(at(utc, 5, 1, 10, 5, 0)), now: at(utc, 5, 1, 10, 17, 30),
			want: ptr.To(at(utc, 5, 1, 10, 15, 0)), wantMissed: fewMissed},
		{name: "more than 100 missed times is many",
			schedule: "*/1 * * * *", created: at(utc, 5, 1, 9, 0, 0), last: ptr.To(at(utc, 5, 1, 9, 0, 0)), now: at(utc, 5, 1, 12, 0, 20),
			want: ptr.To(at(utc, 5, 1, 12, 0, 0)), wantMissed: manyMissed},
		{name: "99 days of missed minutes still finds the latest one",
			schedule: "*/1 * * * ?", created: at(utc, 1, 1, 0, 0, 0), last: ptr.To(at(utc, 1, 2, 0, 0, 0)), now: at(utc, 4, 9, 13, 37, 42),
			want: ptr.To(at(utc, 4, 9, 13, 37, 0)), wantMissed: manyMissed},
		{name: "the starting deadline hides times older than it",
			schedule: "*/1 * * * *", created: at(utc, 5, 1, 9, 0, 0), last: ptr.To(at(utc, 5, 1, 10, 0, 0)), deadline: ptr.To[int64](10),
			now: at(utc, 5, 1, 10, 5, 30)},
		{name: "a time within the starting deadline is still due",
			schedule: "*/1 * * * *", created: at(utc, 5, 1, 9, 0, 0), last: ptr.To(at(utc, 5, 1, 10, 0, 0)), deadline: ptr.To[int64](60),
			now: at(utc, 5, 1, 10, 5, 30), want: ptr.To(at(utc, 5, 1, 10, 5, 0))},
		{name: "without deadlines (for the next wake-up) the old times count",
			schedule: "*/1 * * * *", created: at(utc, 5, 1, 9, 0, 0), last: ptr.To(at(utc, 5, 1, 10, 0, 0)), deadline: ptr.To[int64](10),
			now: at(utc, 5, 1, 10, 5, 30), want: ptr.To(at(utc, 5, 1, 10, 5, 0)), wantMissed: fewMissed, withoutDeadlines: true},
		{name: "@every counts from the creation time",
			schedule: "@every 2h", created: at(utc, 5, 1, 10, 0, 0), now: at(utc, 5, 1, 15, 30, 0),
			want: ptr.To(at(utc, 5, 1, 14, 0, 0)), wantMissed: fewMissed},
		{name: "an irregular schedule: weekdays at 6:30, 10:30 and 14:30",
			schedule: "30 6-16/4 * * 1-5", created: at(utc, 5, 3, 12, 0, 0), now: at(utc, 5, 6, 11, 0, 0), // Friday noon to Monday 11:00
			want: ptr.To(at(utc, 5, 6, 10, 30, 0)), wantMissed: fewMissed},
		{name: "spec.timeZone: 9:00 in Tokyo is midnight UTC",
			schedule: "0 9 * * *", timeZone: ptr.To("Asia/Tokyo"), created: at(utc, 5, 1, 23, 0, 0), now: at(utc, 5, 2, 0, 0, 30),
			want: ptr.To(at(tokyo, 5, 2, 9, 0, 0))},
		{name: "spring forward: 2:30 does not exist in New York on March 10, so nothing runs that day",
			schedule: "30 2 * * *", timeZone: ptr.To("America/New_York"), created: at(newYork, 3, 9, 12, 0, 0), now: at(newYork, 3, 10, 23, 0, 0)},
		{name: "spring forward: the next run is 2:30 the day after",
			schedule: "30 2 * * *", timeZone: ptr.To("America/New_York"), created: at(newYork, 3, 9, 12, 0, 0), now: at(newYork, 3, 11, 3, 0, 0),
			want: ptr.To(at(newYork, 3, 11, 2, 30, 0))},
		{name: "fall back: 1:30 happens twice in New York on November 3, the first in EDT",
			schedule: "30 1 * * *", timeZone: ptr.To("America/New_York"), created: at(newYork, 11, 2, 12, 0, 0), now: time.Date(2024, 11, 3, 5, 45, 0, 0, utc),
			want: ptr.To(time.Date(2024, 11, 3, 5, 30, 0, 0, utc))}, // 1:30 EDT
		{name: "fall back: and it runs again at 1:30 EST, an hour later",
			schedule: "30 1 * * *", timeZone: ptr.To("America/New_York"), created: at(newYork, 11, 2, 12, 0, 0),
			last: ptr.To(time.Date(2024, 11, 3, 5, 30, 0, 0, utc)), now: time.Date(2024, 11, 3, 6, 45, 0, 0, utc),
			want: ptr.To(time.Date(2024, 11, 3, 6, 30, 0, 0, utc))}, // 1:30 EST
		{name: "a daily schedule in a time zone after DST ends keeps local time",
			schedule: "0 9 * * *", timeZone: ptr.To("America/New_York"), created: at(newYork, 11, 2, 12, 0, 0), now: time.Date(2024, 11, 4, 14, 30, 0, 0, utc),
			want: ptr.To(time.Date(2024, 11, 4, 14, 0, 0, 0, utc)), wantMissed: fewMissed}, // 9:00 EST is 14:00 UTC (it was 13:00 in EDT)
		{name: "February the 31st parses but never comes",
			schedule: "59 23 31 2 *", created: at(utc, 1, 1, 0, 0, 0), now: at(utc, 5, 1, 0, 0, 0), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sched, err := cronschedule.Parse(cronschedule.InTimeZone(tt.schedule, tt.timeZone))
			if err != nil {
				t.Fatal(err)
			}
			cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(tt.created)},
				Spec: batchv1.CronJobSpec{Schedule: tt.schedule, TimeZone: tt.timeZone, StartingDeadlineSeconds: tt.deadline}}
			if tt.last != nil {
				cj.Status.LastScheduleTime = &metav1.Time{Time: *tt.last}
			}
			_, got, missed, err := mostRecentScheduleTime(cj, tt.now, sched, !tt.withoutDeadlines)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if (got == nil) != (tt.want == nil) || (got != nil && !got.Equal(*tt.want)) {
				t.Errorf("most recent schedule time = %v, want %v", fmtTime(got), fmtTime(tt.want))
			}
			if missed != tt.wantMissed {
				t.Errorf("missed = %d, want %d", missed, tt.wantMissed)
			}
		})
	}
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "none"
	}
	return t.UTC().Format(time.RFC3339)
}

func TestNextScheduleDelay(t *testing.T) {
	base := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		schedule string
		created  time.Duration // after base
		last     *time.Duration
		deadline *int64
		now      time.Duration
		want     time.Duration
	}{
		{name: "a new CronJob wakes just after its first time", schedule: "*/1 * * * *",
			created: 30 * time.Second, now: 50 * time.Second, want: 10*time.Second + nextScheduleDelta},
		{name: "just after a run, the next is a minute later", schedule: "*/1 * * * *",
			last: ptr.To(5 * time.Minute), now: 5*time.Minute + 200*time.Millisecond, want: 59*time.Second + 800*time.Millisecond + nextScheduleDelta},
		{name: "after missed times, the next comes after the most recent", schedule: "*/1 * * * *",
			last: ptr.To(time.Duration(0)), now: 65*time.Minute + 30*time.Second, want: 30*time.Second + nextScheduleDelta},
		{name: "an hourly schedule sleeps until the hour", schedule: "@hourly",
			now: 20 * time.Minute, want: 40*time.Minute + nextScheduleDelta},
		{name: "a CronJob whose times are all past its deadline still wakes at each", schedule: "*/1 * * * *",
			last: ptr.To(time.Duration(0)), deadline: ptr.To[int64](5), now: 3*time.Minute + 30*time.Second, want: 30*time.Second + nextScheduleDelta},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sched, err := cronschedule.Parse(tt.schedule)
			if err != nil {
				t.Fatal(err)
			}
			cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(base.Add(tt.created))},
				Spec: batchv1.CronJobSpec{StartingDeadlineSeconds: tt.deadline}}
			if tt.last != nil {
				cj.Status.LastScheduleTime = &metav1.Time{Time: base.Add(*tt.last)}
			}
			if got := nextScheduleDelay(cj, base.Add(tt.now), sched); got != tt.want {
				t.Errorf("next sync in %v, want %v", got, tt.want)
			}
		})
	}
}
