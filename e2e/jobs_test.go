package e2e

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Jobs, driven with the real kubectl against the real binaries: the fake
// kubelets run each container's command in the simulated shell, so
// `sh -c 'exit 1'` fails a pod as it would on a node, and the job
// controller counts what ended.

// jobWait is how long a Job of quick pods may take: a failed pod is
// replaced only after the 10s failure backoff.
const jobWait = 60 * time.Second

// workJob runs 4 pods, 2 at a time, each succeeding at once.
const workJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: work
spec:
  completions: 4
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: busybox
        command: ["sh", "-c", "echo working; exit 0"]
`

// doomedJob fails every pod; backoffLimit 1 allows one retry.
const doomedJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: doomed
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: fail
        image: busybox
        command: ["sh", "-c", "exit 3"]
`

// indexedJob runs indexes 0, 1 and 2, each printing its index.
const indexedJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: indexed
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: worker
        image: busybox
        command: ["sh", "-c", "echo index=$JOB_COMPLETION_INDEX host=$(hostname)"]
`

// shortLivedJob is deleted, with its pod, as soon as it completes.
const shortLivedJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: short
spec:
  ttlSecondsAfterFinished: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        command: ["sh", "-c", "exit 0"]
`

// sleeperJob runs two pods that do not end by themselves.
const sleeperJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: sleeper
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: c
        image: busybox
        command: ["sleep", "3600"]
`

func TestJobs(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "the node is Ready", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "nodes")
		return code == 0 && sameStrings(parseTable(t, out).column("STATUS"), []string{"Ready"}), out + errOut
	})

	// getJob waits until `kubectl get job NAME` shows the status wanted,
	// and returns its row.
	getJob := func(t *testing.T, name, status string) map[string]string {
		t.Helper()
		var row map[string]string
		testserver.EventuallyWithin(t, jobWait, "job "+name+" is "+status, func() (bool, string) {
			out, errOut, code := k.kubectl(t, "get", "job", name)
			if code != 0 {
				return false, errOut
			}
			tab := parseTable(t, out)
			if strings.Join(tab.header, " ") != "NAME STATUS COMPLETIONS DURATION AGE" {
				t.Fatalf("kubectl get job columns %v, want Kubernetes' NAME STATUS COMPLETIONS DURATION AGE", tab.header)
			}
			row = tab.rows[0]
			return row["STATUS"] == status, out
		})
		return row
	}
	// podsOf returns the pods of Job name: their phase by pod name.
	podsOf := func(t *testing.T, name string) map[string]string {
		t.Helper()
		out := k.mustKubectl(t, "get", "pods", "-l", "batch.kubernetes.io/job-name="+name, "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.phase}{\"\\n\"}{end}")
		phases := map[string]string{}
		for _, line := range strings.Fields(out) {
			pod, phase, _ := strings.Cut(line, "=")
			phases[pod] = phase
		}
		return phases
	}
	jobStatus := func(t *testing.T, name string) (st struct {
		Succeeded, Failed, Active int
		CompletedIndexes          string
		Conditions                []struct{ Type, Status, Reason, Message string }
	}) {
		t.Helper()
		if err := json.Unmarshal([]byte(k.mustKubectl(t, "get", "job", name, "-o", "jsonpath={.status}")), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}

	t.Run("kubectl create job runs one pod to completion", func(t *testing.T) {
		out := k.mustKubectl(t, "create", "job", "pi", "--image=busybox", "--", "sh", "-c", "echo 3.14159; exit 0")
		if strings.TrimSpace(out) != "job.batch/pi created" {
			t.Errorf("kubectl create job said %q", out)
		}
		row := getJob(t, "pi", "Complete")
		if row["COMPLETIONS"] != "1/1" || row["DURATION"] == "" {
			t.Errorf("row %v, want COMPLETIONS 1/1 and a duration", row)
		}
		phases := podsOf(t, "pi")
		if len(phases) != 1 {
			t.Fatalf("pods %v, want one", phases)
		}
		for pod, phase := range phases {
			if phase != "Succeeded" {
				t.Errorf("pod %s is %s, want Succeeded", pod, phase)
			}
			if logs := k.mustKubectl(t, "logs", pod); strings.TrimSpace(logs) != "3.14159" {
				t.Errorf("logs %q", logs)
			}
		}
		k.mustKubectl(t, "wait", "--for=condition=complete", "job/pi", "--timeout=10s")
		wide := parseTable(t, k.mustKubectl(t, "get", "job", "pi", "-o", "wide"))
		if strings.Join(wide.header, " ") != "NAME STATUS COMPLETIONS DURATION AGE CONTAINERS IMAGES SELECTOR" {
			t.Errorf("wide columns %v", wide.header)
		}
		if r := wide.rows[0]; r["CONTAINERS"] != "pi" || r["IMAGES"] != "busybox" || !strings.HasPrefix(r["SELECTOR"], "batch.kubernetes.io/controller-uid=") {
			t.Errorf("wide row %v", r)
		}
		describe := k.mustKubectl(t, "describe", "job", "pi")
		words := strings.Join(strings.Fields(describe), " ") // tabwriter's padding aside
		for _, want := range []string{"Pods Statuses: 0 Active (0 Ready) / 1 Succeeded / 0 Failed", "Completion Mode: NonIndexed",
			"Labels: batch.kubernetes.io/controller-uid=", "job-controller Created pod: pi-", "Normal Completed", "job-controller Job completed"} {
			if !strings.Contains(words, want) {
				t.Errorf("kubectl describe job lacks %q:\n%s", want, describe)
			}
		}
	})

	t.Run("completions and parallelism", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "work.yaml", workJob))
		row := getJob(t, "work", "Complete")
		if row["COMPLETIONS"] != "4/4" {
			t.Errorf("row %v, want 4/4", row)
		}
		phases := podsOf(t, "work")
		if len(phases) != 4 {
			t.Errorf("pods %v, want 4", phases)
		}
		for pod, phase := range phases {
			if phase != "Succeeded" {
				t.Errorf("pod %s is %s", pod, phase)
			}
		}
	})

	t.Run("a failing Job stops at its backoff limit", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "doomed.yaml", doomedJob))
		row := getJob(t, "doomed", "Failed")
		if row["COMPLETIONS"] != "0/1" {
			t.Errorf("row %v", row)
		}
		st := jobStatus(t, "doomed")
		var failed string
		for _, cond := range st.Conditions {
			if cond.Type == "Failed" && cond.Status == "True" {
				failed = cond.Reason + ": " + cond.Message
			}
		}
		if failed != "BackoffLimitExceeded: Job has reached the specified backoff limit" || st.Failed != 2 {
			t.Errorf("Failed condition %q, failed %d; want BackoffLimitExceeded after 2 pods", failed, st.Failed)
		}
		phases := podsOf(t, "doomed")
		if len(phases) != 2 {
			t.Errorf("pods %v, want the first and its one retry", phases)
		}
		for pod, phase := range phases {
			if phase != "Failed" {
				t.Errorf("pod %s is %s, want Failed", pod, phase)
			}
		}
		events := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=doomed")
		if !strings.Contains(events, "BackoffLimitExceeded") || !strings.Contains(events, "Job has reached the specified backoff limit") {
			t.Errorf("events lack BackoffLimitExceeded:\n%s", events)
		}
	})

	t.Run("an Indexed Job gives each pod its index", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "indexed.yaml", indexedJob))
		getJob(t, "indexed", "Complete")
		if st := jobStatus(t, "indexed"); st.CompletedIndexes != "0-2" || st.Succeeded != 3 {
			t.Errorf("completedIndexes %q, succeeded %d; want 0-2, 3", st.CompletedIndexes, st.Succeeded)
		}
		seen := map[string]bool{}
		for pod := range podsOf(t, "indexed") {
			ix := k.mustKubectl(t, "get", "pod", pod, "-o", "jsonpath={.metadata.annotations.batch\\.kubernetes\\.io/job-completion-index}")
			logs := strings.TrimSpace(k.mustKubectl(t, "logs", pod))
			if want := "index=" + ix + " host=indexed-" + ix; logs != want {
				t.Errorf("pod %s logs %q, want %q", pod, logs, want)
			}
			if !strings.HasPrefix(pod, "indexed-"+ix+"-") {
				t.Errorf("pod %s of index %s is not named indexed-%s-...", pod, ix, ix)
			}
			seen[ix] = true
		}
		if len(seen) != 3 {
			t.Errorf("indexes %v, want 0, 1 and 2", seen)
		}
	})

	t.Run("ttlSecondsAfterFinished deletes a finished Job and its pods", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "short.yaml", shortLivedJob))
		testserver.EventuallyWithin(t, jobWait, "the finished Job is deleted", func() (bool, string) {
			out, errOut, code := k.kubectl(t, "get", "job", "short")
			return code != 0 && strings.Contains(errOut, `jobs.batch "short" not found`), out + errOut
		})
		testserver.EventuallyWithin(t, jobWait, "its pod is gone too", func() (bool, string) {
			phases := podsOf(t, "short")
			return len(phases) == 0, strings.Join(jobPodNames(phases), ",")
		})
	})

	t.Run("kubectl delete job deletes its pods", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "sleeper.yaml", sleeperJob))
		testserver.EventuallyWithin(t, jobWait, "both pods run", func() (bool, string) {
			phases := podsOf(t, "sleeper")
			return len(phases) == 2 && phases[jobPodNames(phases)[0]] == "Running" && phases[jobPodNames(phases)[1]] == "Running", strings.Join(jobPodNames(phases), ",")
		})
		if row := getJob(t, "sleeper", "Running"); row["COMPLETIONS"] != "0/2" {
			t.Errorf("row %v", row)
		}
		if out := k.mustKubectl(t, "delete", "job", "sleeper"); strings.TrimSpace(out) != `job.batch "sleeper" deleted` {
			t.Errorf("kubectl delete said %q", out)
		}
		testserver.EventuallyWithin(t, jobWait, "the pods are deleted with the Job", func() (bool, string) {
			phases := podsOf(t, "sleeper")
			return len(phases) == 0, strings.Join(jobPodNames(phases), ",")
		})
	})

	// kubectl get jobs lists them all as Kubernetes does.
	tab := parseTable(t, k.mustKubectl(t, "get", "jobs"))
	got := map[string]string{}
	for _, r := range tab.rows {
		got[r["NAME"]] = r["STATUS"] + " " + r["COMPLETIONS"]
	}
	want := map[string]string{"pi": "Complete 1/1", "work": "Complete 4/4", "doomed": "Failed 0/1", "indexed": "Complete 3/3"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("kubectl get jobs: %s is %q, want %q (all: %v)", name, got[name], w, got)
		}
	}
}

// jobPodNames are the pod names of a phases map, sorted.
func jobPodNames(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
