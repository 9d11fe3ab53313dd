// Package cronschedule reads a CronJob's spec.schedule as Kubernetes does:
// the five fields of crontab(5) ("*/5 * * * *") or a descriptor
// ("@hourly", "@every 1h30m"), parsed by github.com/robfig/cron/v3's
// ParseStandard, and placed in spec.timeZone when there is one. The API
// server parses to validate (registry/batch); the cronjob controller
// parses to compute when Jobs are due.
package cronschedule

import (
	"fmt"
	"strings"
	// Time zones are compiled in, as kube-apiserver and
	// kube-controller-manager do, so spec.timeZone works on a machine
	// without /usr/share/zoneinfo (a distroless image).
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// Parse parses a schedule. The cron library panics on some inputs
// ("TZ=0", a time zone with no fields after it); Kubernetes recovers and
// calls them invalid (pkg/util/parsers.ParseCronScheduleWithPanicRecovery),
// and so does this.
func Parse(schedule string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	return cron.ParseStandard(schedule)
}

// HasTimeZone reports whether the schedule names a time zone itself
// ("TZ=Europe/Paris 0 9 * * *" or "CRON_TZ=..."), which the cron library
// reads but Kubernetes forbids in new schedules: spec.timeZone says it.
// Kubernetes tests for "TZ" anywhere, and so does this.
func HasTimeZone(schedule string) bool { return strings.Contains(schedule, "TZ") }

// InTimeZone is the schedule the controller parses: spec.schedule in
// spec.timeZone, by the library's own "TZ=<zone> " prefix. A schedule
// with no time zone runs in the controller manager's local time, as in
// Kubernetes; one that already names a zone (allowed only in CronJobs
// created before that was forbidden) keeps its own.
func InTimeZone(schedule string, timeZone *string) string {
	if timeZone == nil || HasTimeZone(schedule) {
		return schedule
	}
	return "TZ=" + *timeZone + " " + schedule
}
