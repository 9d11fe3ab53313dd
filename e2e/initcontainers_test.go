package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

const initPods = `apiVersion: v1
kind: Pod
metadata:
  name: init-ok
spec:
  initContainers:
  - name: wait-for-db
    image: busybox:1.36
    command: [sh, -c, "echo waiting for db; sleep 2; echo db is up"]
  - name: migrate
    image: busybox:1.36
    command: [sh, -c, "echo migrated"]
  containers:
  - name: app
    image: nginx:1.25
---
apiVersion: v1
kind: Pod
metadata:
  name: init-fails-never
spec:
  restartPolicy: Never
  initContainers:
  - name: check
    image: busybox:1.36
    command: [sh, -c, "echo no config >&2; exit 2"]
  containers:
  - name: app
    image: nginx:1.25
---
apiVersion: v1
kind: Pod
metadata:
  name: init-fails-always
spec:
  initContainers:
  - name: check
    image: busybox:1.36
    command: [sh, -c, "exit 1"]
  containers:
  - name: app
    image: nginx:1.25
---
apiVersion: v1
kind: Pod
metadata:
  name: with-sidecar
spec:
  restartPolicy: Never
  initContainers:
  - name: proxy
    image: nginx:1.25
    restartPolicy: Always
  containers:
  - name: job
    image: busybox:1.36
    command: [sh, -c, "sleep 2; echo job done"]
`

// TestInitContainers: init containers run in order, each to completion,
// before the app containers (Init:N/M, then Running); a failed one fails
// the pod under Never (Init:Error) and crash-loops otherwise
// (Init:CrashLoopBackOff); a sidecar keeps running beside the app and
// does not keep a finished pod from Succeeded.
func TestInitContainers(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01",
		flags: []string{"--crash-loop-backoff-initial", "1s", "--crash-loop-backoff-max", "4s"}})
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "init.yaml", initPods))

	statusOf := func(name string) (string, string) {
		out, _, _ := k.kubectl(t, "get", "pod", name, "--no-headers")
		f := strings.Fields(out)
		if len(f) < 3 {
			return "", out
		}
		return f[2], out
	}
	seen := map[string]bool{}
	testserver.EventuallyWithin(t, 60*time.Second, "init-ok goes through Init:0/2 and Init:1/2 to Running", func() (bool, string) {
		status, out := statusOf("init-ok")
		seen[status] = true
		return status == "Running", out
	})
	if !seen["Init:0/2"] {
		t.Errorf("init-ok's STATUS went through %v, want Init:0/2 while wait-for-db ran", seen)
	}
	if out := k.mustKubectl(t, "get", "pod", "init-ok", "-o", "jsonpath={.status.initContainerStatuses[*].state.terminated.reason} {.status.conditions[?(@.type=='Initialized')].status}"); out != "Completed Completed True" {
		t.Errorf("init-ok's init containers: %q, want both Completed and the pod Initialized", out)
	}
	if out := k.mustKubectl(t, "logs", "init-ok", "-c", "wait-for-db"); out != "waiting for db\ndb is up\n" {
		t.Errorf("kubectl logs init-ok -c wait-for-db: %q", out)
	}
	for name, want := range map[string][2]string{
		"init-fails-never":  {"Failed", "Init:Error"},
		"init-fails-always": {"Pending", "Init:CrashLoopBackOff"},
		"with-sidecar":      {"Succeeded", "Completed"},
	} {
		testserver.EventuallyWithin(t, 60*time.Second, name+" is "+want[0]+" "+want[1], func() (bool, string) {
			phase, _, _ := k.kubectl(t, "get", "pod", name, "-o", "jsonpath={.status.phase}")
			status, out := statusOf(name)
			return phase == want[0] && status == want[1], phase + ": " + out
		})
	}
	if out := k.mustKubectl(t, "get", "pod", "init-fails-never", "-o", "jsonpath={.status.conditions[?(@.type=='Initialized')].message} {.status.containerStatuses[0].state.waiting.reason}"); out != "containers with incomplete status: [check] PodInitializing" {
		t.Errorf("init-fails-never: %q, want Initialized False for [check] and the app never started", out)
	}
}
