package cronjob

import (
	"errors"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
)

// When is a CronJob due? The controller never ticks every minute: each
// sync works out the most recent schedule time that has passed and not
// been run, runs it, and sleeps until the next one (nextScheduleDelay).
// The reference point is status.lastScheduleTime, or the CronJob's
// creation before its first run; with spec.startingDeadlineSeconds, times
// older than the deadline are not even looked at.
//
// Worked example, schedule "*/5 * * * *", last run 10:05, now 10:17:30:
// the times since are 10:10 and 10:15; the most recent, 10:15, is run
// (10:10 is skipped: a CronJob catches up with one Job, not one per
// missed time), and the next sync is due at 10:20:00.1.

// missedSchedules says how many schedule times passed unrun.
type missedSchedules int

const (
	noneMissed missedSchedules = iota // the next time is still ahead (or only one passed)
	fewMissed                         // several passed: the controller was down, or the CronJob suspended
	manyMissed                        // more than tooManyMissed: worth a warning
)

// tooManyMissed: past this many missed times the controller warns
// (TooManyMissedTimes). Kubernetes chose 100 as "more than 80, but less
// than lots": a weekend without the controller misses ~80 hourly runs,
// which is normal; many more suggests a wrong clock.
const tooManyMissed = 100

// nextScheduleDelta pads each wake-up past the schedule time, so that a
// clock a little behind (NTP skew) still sees the time as passed.
const nextScheduleDelta = 100 * time.Millisecond

// errScheduleNeverRepeats is a schedule that parses but cannot run twice
// a second apart: "59 23 31 2 *" (February the 31st) has no next time.
var errScheduleNeverRepeats = errors.New("time difference between two schedules is less than 1 second")

// mostRecentScheduleTime returns the time counting starts from (the last
// schedule time, the creation time, or now minus the starting deadline
// when withDeadline), the most recent schedule time that is not after now
// (nil if none has come yet), and how many were missed.
func mostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, withDeadline bool) (time.Time, *time.Time, missedSchedules, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if withDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		// Nothing older than the deadline may start, so it is not counted.
		if deadline := now.Add(-time.Duration(*cj.Spec.StartingDeadlineSeconds) * time.Second); deadline.After(earliest) {
			earliest = deadline
		}
	}
	t1 := sched.Next(earliest)
	t2 := sched.Next(t1)
	switch {
	case now.Before(t1):
		return earliest, nil, noneMissed, nil
	case now.Before(t2):
		return earliest, &t1, noneMissed, nil
	}
	// Two or more times passed. Rather than walk every one (years of
	// minutes, if a clock was wrong), estimate their number from the
	// interval between the first two, jump to just before the last of
	// them, and walk from there. The extra interval back makes the walk
	// land right on irregular schedules ("30 6-16/4 * * 1-5").
	interval := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if interval < 1 {
		return earliest, nil, noneMissed, errScheduleNeverRepeats
	}
	missed := int64(now.Sub(t1).Seconds())/interval + 1
	var mostRecent time.Time
	for t := sched.Next(t1.Add(time.Duration((missed-2)*interval) * time.Second)); !t.After(now); t = sched.Next(t) {
		mostRecent = t
	}
	how := fewMissed
	if missed > tooManyMissed {
		how = manyMissed
	}
	if mostRecent.IsZero() {
		return earliest, nil, how, nil
	}
	return earliest, &mostRecent, how, nil
}

// nextScheduleDelay is how long until the CronJob should be synced
// again: just past its next schedule time. It does not apply the
// starting deadline, so a CronJob whose times are all too late still
// wakes at each one (to report MissSchedule).
func nextScheduleDelay(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) time.Duration {
	earliest, mostRecent, missed, err := mostRecentScheduleTime(cj, now, sched, false)
	from := now // an invalid schedule: still try again at its next slot
	switch {
	case err != nil:
	case mostRecent != nil:
		from = *mostRecent
	case missed == noneMissed:
		from = earliest
	}
	return sched.Next(from).Add(nextScheduleDelta).Sub(now)
}
