package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// CronJobs with the real kubectl against the real binaries: the cronjob
// controller creates a Job at the next minute, the job controller runs its
// pod, the kubelet reports it Succeeded. A real minute passes: schedules
// are in minutes, and the controller's clock is the real one.

// sleepyCronJob is suspended from the start: it must never run.
const sleepyCronJob = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: sleepy
spec:
  schedule: "*/1 * * * *"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: busybox
            command: ["sh", "-c", "exit 0"]
`

func TestCronJobs(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "node01 is Ready", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "nodes")
		return code == 0 && strings.Contains(out, " Ready "), out + errOut
	})

	out := k.mustKubectl(t, "api-resources", "--api-group", "batch")
	if row := parseTable(t, out).row(t, "NAME", "cronjobs"); row["SHORTNAMES"] != "cj" || row["APIVERSION"] != "batch/v1" ||
		row["NAMESPACED"] != "true" || row["KIND"] != "CronJob" {
		t.Errorf("kubectl api-resources: %v", row)
	}

	if out := k.mustKubectl(t, "create", "cronjob", "hello", "--image=busybox", "--schedule=*/1 * * * *", "--", "sh", "-c", "exit 0"); out != "cronjob.batch/hello created\n" {
		t.Errorf("create cronjob printed %q", out)
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "sleepy.yaml", sleepyCronJob))

	// kubectl get: the columns of kube-apiserver's CronJob printer.
	out = k.mustKubectl(t, "get", "cronjobs")
	tab := parseTable(t, out)
	if want := []string{"NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"}; strings.Join(tab.header, "|") != strings.Join(want, "|") {
		t.Errorf("kubectl get cronjobs header %q, want %q", tab.header, want)
	}
	hello := tab.row(t, "NAME", "hello")
	// A minute may have turned since the create (the schedule is every
	// minute of the real clock): then a Job is already active.
	fired := hello["LAST SCHEDULE"] != "<none>"
	if hello["SCHEDULE"] != "*/1 * * * *" || hello["TIMEZONE"] != "<none>" || hello["SUSPEND"] != "False" || (!fired && hello["ACTIVE"] != "0") {
		t.Errorf("a new CronJob's row: %v\n%s", hello, out)
	}
	if sleepy := tab.row(t, "NAME", "sleepy"); sleepy["SUSPEND"] != "True" {
		t.Errorf("the suspended CronJob's row: %v", sleepy)
	}
	if all := k.mustKubectl(t, "get", "all"); !strings.Contains(all, "cronjob.batch/hello") {
		t.Errorf("kubectl get all does not list the CronJob (category all):\n%s", all)
	}
	wide := parseTable(t, k.mustKubectl(t, "get", "cj", "hello", "-o", "wide")).row(t, "NAME", "hello")
	if wide["CONTAINERS"] != "hello" || wide["IMAGES"] != "busybox" || wide["SELECTOR"] != "<none>" {
		t.Errorf("kubectl get cj -o wide: %v", wide)
	}
	// The defaults Kubernetes fills in.
	if got := k.mustKubectl(t, "get", "cronjob", "hello", "-o",
		"jsonpath={.spec.concurrencyPolicy} {.spec.successfulJobsHistoryLimit} {.spec.failedJobsHistoryLimit} {.spec.jobTemplate.spec.template.spec.restartPolicy}"); got != "Allow 3 1 OnFailure" {
		t.Errorf("defaults: %q, want \"Allow 3 1 OnFailure\"", got)
	}

	// Bad input, in Kubernetes' words.
	errOut := k.mustFail(t, "create", "cronjob", "bad", "--image=busybox", "--schedule=61 * * * *")
	if want := `CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`; !strings.Contains(errOut, want) {
		t.Errorf("a bad schedule: %s\nwant %s", errOut, want)
	}
	errOut = k.mustFail(t, "create", "cronjob", "tz", "--image=busybox", "--schedule=TZ=UTC 0 * * * *")
	if want := `spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`; !strings.Contains(errOut, want) {
		t.Errorf("a time zone in the schedule: %s\nwant %s", errOut, want)
	}
	badZone := strings.Replace(sleepyCronJob, "  suspend: true\n", "  timeZone: Mars/Olympus\n", 1)
	errOut = k.mustFail(t, "create", "-f", k.manifest(t, "badzone.yaml", strings.Replace(badZone, "name: sleepy", "name: mars", 1)))
	if want := `spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus`; !strings.Contains(errOut, want) {
		t.Errorf("an unknown time zone: %s\nwant %s", errOut, want)
	}
	restarts := strings.Replace(strings.Replace(sleepyCronJob, "restartPolicy: Never", "restartPolicy: Always", 1), "name: sleepy", "name: restarts", 1)
	errOut = k.mustFail(t, "create", "-f", k.manifest(t, "restarts.yaml", restarts))
	if want := `spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`; !strings.Contains(errOut, want) {
		t.Errorf("a template whose pods restart: %s\nwant %s", errOut, want)
	}

	// kubectl create job --from=cronjob/: kubectl itself makes a Job of
	// the template, owned by the CronJob.
	if out := k.mustKubectl(t, "create", "job", "manual", "--from=cronjob/hello"); out != "job.batch/manual created\n" {
		t.Errorf("create job --from printed %q", out)
	}
	if got := k.mustKubectl(t, "get", "job", "manual", "-o", `jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.annotations.cronjob\.kubernetes\.io/instantiate}`); got != "CronJob/hello manual" {
		t.Errorf("the manual Job's owner and annotation: %q", got)
	}

	// At the next minute the controller creates hello-<minutes since the
	// epoch>, and the job controller runs it to completion.
	var scheduled string
	testserver.EventuallyWithin(t, 100*time.Second, "a scheduled Job of hello completes", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "get", "jobs")
		if out == "" {
			return false, errOut // No resources found
		}
		for _, r := range parseTable(t, out).rows {
			if strings.HasPrefix(r["NAME"], "hello-") && r["STATUS"] == "Complete" {
				scheduled = r["NAME"]
				return true, out
			}
		}
		return false, out + errOut
	})
	got := k.mustKubectl(t, "get", "job", scheduled, "-o",
		`jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.annotations.batch\.kubernetes\.io/cronjob-scheduled-timestamp}`)
	owner, stamp, _ := strings.Cut(got, " ")
	if owner != "CronJob/hello" {
		t.Errorf("the scheduled Job's owner: %q", owner)
	}
	if ts, err := time.Parse(time.RFC3339, stamp); err != nil || ts.Second() != 0 {
		t.Errorf("cronjob-scheduled-timestamp %q is not a minute in RFC 3339 (%v)", stamp, err)
	}
	testserver.EventuallyWithin(t, 30*time.Second, "hello's status records the run and the success", func() (bool, string) {
		out := k.mustKubectl(t, "get", "cronjob", "hello", "-o", "jsonpath={.status.lastScheduleTime} {.status.lastSuccessfulTime} {.status.active}")
		f := strings.Fields(out)
		return len(f) == 2, out // both times set, no active Job
	})
	row := parseTable(t, k.mustKubectl(t, "get", "cronjob", "hello")).row(t, "NAME", "hello")
	if row["LAST SCHEDULE"] == "<none>" || row["ACTIVE"] != "0" {
		t.Errorf("after the run: %v", row)
	}
	describe := k.mustKubectl(t, "describe", "cronjob", "hello")
	for _, want := range []string{"SuccessfulCreate", "Created job " + scheduled, "SawCompletedJob", "Saw completed job: " + scheduled + ", condition: Complete"} {
		if !strings.Contains(describe, want) {
			t.Errorf("kubectl describe cronjob hello has no %q:\n%s", want, describe)
		}
	}

	// The suspended CronJob slept through the same minute.
	if out := k.mustKubectl(t, "get", "jobs", "-o", "name"); strings.Contains(out, "sleepy") {
		t.Errorf("the suspended CronJob ran: %s", out)
	}
	if row := parseTable(t, k.mustKubectl(t, "get", "cronjob", "sleepy")).row(t, "NAME", "sleepy"); row["LAST SCHEDULE"] != "<none>" {
		t.Errorf("the suspended CronJob has a last schedule: %v", row)
	}
	k.mustKubectl(t, "patch", "cronjob", "hello", "-p", `{"spec":{"suspend":true}}`)
	if row := parseTable(t, k.mustKubectl(t, "get", "cronjob", "hello")).row(t, "NAME", "hello"); row["SUSPEND"] != "True" {
		t.Errorf("after suspending: %v", row)
	}

	// Deleting the CronJob deletes its Jobs: the garbage collector follows
	// their owner references.
	k.mustKubectl(t, "delete", "cronjob", "hello")
	testserver.EventuallyWithin(t, 30*time.Second, "hello's Jobs are deleted with it", func() (bool, string) {
		out := k.mustKubectl(t, "get", "jobs", "-o", "name")
		return !strings.Contains(out, "hello-") && !strings.Contains(out, "job.batch/manual"), out
	})
}
