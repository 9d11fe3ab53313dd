package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// restartPod is a pod of the restart table: its restart policy and its
// containers, each a busybox shell script ("" for an nginx that runs).
func restartPod(name, policy string, scripts ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  restartPolicy: %s\n  terminationGracePeriodSeconds: 1\n  containers:\n", name, policy)
	for i, script := range scripts {
		switch {
		case script == "":
			fmt.Fprintf(&b, "  - name: c%d\n    image: nginx:1.25\n", i)
		case script == "oom":
			// The Kubernetes docs' memory-limit example: stress wants 250Mi,
			// the limit is 100Mi.
			fmt.Fprintf(&b, "  - name: c%d\n    image: polinux/stress\n    resources:\n      limits:\n        memory: 100Mi\n"+
				"    command: [stress]\n    args: [--vm, \"1\", --vm-bytes, 250M, --vm-hang, \"1\"]\n", i)
		default:
			fmt.Fprintf(&b, "  - name: c%d\n    image: busybox:1.36\n    command: [sh, -c, %q]\n", i, script)
		}
	}
	return b.String()
}

// TestRestartPolicies is seed 003 §5.3's table, each row under each
// restart policy, as `kubectl get pods` shows it. The kubelet's back-off
// starts at 1 s here (Kubernetes: 10 s) so restarts come fast.
func TestRestartPolicies(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01",
		flags: []string{"--crash-loop-backoff-initial", "1s", "--crash-loop-backoff-max", "4s"}})
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "node01 is Ready", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "nodes", "node01", "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}")
		return out == "True", out
	})

	// What `kubectl get pod` shows once the row's event has happened:
	// the phase, the STATUS column (a regexp) and whether RESTARTS grows.
	type want struct {
		phase, status string
		restarts      bool
	}
	rows := []struct {
		name    string
		scripts []string
		always  want
		onFail  want
		never   want
	}{
		{"exit0", []string{"echo done; exit 0"},
			want{"Running", "Completed|CrashLoopBackOff|Running", true}, want{"Succeeded", "Completed", false}, want{"Succeeded", "Completed", false}},
		{"exit1", []string{"echo failing; exit 1"},
			want{"Running", "Error|CrashLoopBackOff|Running", true}, want{"Running", "Error|CrashLoopBackOff|Running", true}, want{"Failed", "Error", false}},
		{"two-one-fails", []string{"", "sleep 1; exit 1"},
			want{"Running", "Error|CrashLoopBackOff|Running", true}, want{"Running", "Error|CrashLoopBackOff|Running", true}, want{"Running", "Error", false}},
		{"two-one-oom", []string{"", "oom"},
			want{"Running", "OOMKilled|CrashLoopBackOff|Running", true}, want{"Running", "OOMKilled|CrashLoopBackOff|Running", true}, want{"Running", "OOMKilled", false}},
		{"oom", []string{"oom"},
			want{"Running", "OOMKilled|CrashLoopBackOff|Running", true}, want{"Running", "OOMKilled|CrashLoopBackOff|Running", true}, want{"Failed", "OOMKilled", false}},
	}
	policies := []string{"Always", "OnFailure", "Never"}
	for _, row := range rows {
		for _, policy := range policies {
			name := strings.ToLower(row.name + "-" + policy)
			k.mustKubectl(t, "apply", "-f", k.manifest(t, name+".yaml", restartPod(name, policy, row.scripts...)))
		}
	}
	for _, row := range rows {
		for i, w := range []want{row.always, row.onFail, row.never} {
			name := strings.ToLower(row.name + "-" + policies[i])
			status := regexp.MustCompile("^(" + w.status + ")$")
			testserver.EventuallyWithin(t, 60*time.Second, name+" shows "+w.phase+" "+w.status, func() (bool, string) {
				phase, _, _ := k.kubectl(t, "get", "pod", name, "-o", "jsonpath={.status.phase}")
				out, _, _ := k.kubectl(t, "get", "pod", name, "--no-headers")
				f := strings.Fields(out)
				if len(f) < 4 {
					return false, out
				}
				restarts, _ := strconv.Atoi(f[3])
				return phase == w.phase && status.MatchString(f[2]) && (restarts >= 2) == w.restarts, phase + ": " + out
			})
		}
	}
	// A container that will not run again keeps its exit in the status.
	if out := k.mustKubectl(t, "get", "pod", "exit1-never", "-o", "jsonpath={.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.reason} {.status.containerStatuses[0].restartCount}"); out != "1 Error 0" {
		t.Errorf("exit1-never terminated state: %q, want exit code 1, reason Error, no restart", out)
	}
	if out := k.mustKubectl(t, "logs", "exit1-never"); out != "failing\n" {
		t.Errorf("kubectl logs exit1-never: %q, want what the finished container printed", out)
	}
	if out := k.mustKubectl(t, "get", "pod", "oom-never", "-o", "jsonpath={.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.reason}"); out != "137 OOMKilled" {
		t.Errorf("oom-never terminated state: %q, want 137 OOMKilled", out)
	}
}

// TestCrashLoopBackOff: a container that keeps failing is restarted after
// a delay that doubles up to the cap (here 1 s, 2 s, 4 s, 4 s ...), shown
// as CrashLoopBackOff with the kubelet's message, BackOff events, and
// its last exit in lastState; `kubectl logs --previous` reads the
// instance before.
func TestCrashLoopBackOff(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01",
		flags: []string{"--crash-loop-backoff-initial", "1s", "--crash-loop-backoff-max", "4s"}})
	k := newKubectl(t, c)
	k.mustKubectl(t, "run", "crash", "--image=busybox:1.36", "--", "sh", "-c", "echo about to fail; exit 3")

	seen := map[string]bool{}
	message := regexp.MustCompile(`^back-off (\d+s) restarting failed container=crash pod=crash_default\(`)
	testserver.EventuallyWithin(t, 60*time.Second, "back-off messages of 1s, 2s and 4s", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "crash", "-o", "jsonpath={.status.containerStatuses[0].state.waiting.message}")
		if m := message.FindStringSubmatch(out); m != nil {
			seen[m[1]] = true
		}
		return seen["1s"] && seen["2s"] && seen["4s"], fmt.Sprint(seen, " ", out)
	})
	out := k.mustKubectl(t, "get", "pod", "crash", "-o", "jsonpath={.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].lastState.terminated.exitCode} {.status.containerStatuses[0].lastState.terminated.reason}")
	var restarts int
	var rest string
	if _, err := fmt.Sscanf(out, "%d %s", &restarts, &rest); err != nil || restarts < 3 || !strings.HasSuffix(out, " 3 Error") {
		t.Errorf("restartCount and lastState: %q, want at least 3 restarts and last exit 3 Error", out)
	}
	if out := k.mustKubectl(t, "logs", "crash", "--previous"); out != "about to fail\n" {
		t.Errorf("kubectl logs crash --previous: %q", out)
	}
	if out := k.mustKubectl(t, "describe", "pod", "crash"); !strings.Contains(out, "Back-off restarting failed container crash in pod crash_default(") {
		t.Errorf("kubectl describe pod crash lacks the BackOff event:\n%s", out)
	}
}

// TestActiveDeadlineSeconds: a pod active on its node longer than its
// activeDeadlineSeconds is stopped and Failed, reason DeadlineExceeded,
// whatever its restart policy.
func TestActiveDeadlineSeconds(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "deadline.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: deadline
spec:
  activeDeadlineSeconds: 2
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox:1.36
    command: [sh, -c, "echo working; sleep 3600"]
`))
	testserver.EventuallyWithin(t, 30*time.Second, "deadline is Failed, DeadlineExceeded", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "deadline", "-o", "jsonpath={.status.phase} {.status.reason} {.status.containerStatuses[0].state.terminated.exitCode}")
		return out == "Failed DeadlineExceeded 137", out
	})
	// kubectl's STATUS prefers the container's reason (its SIGKILL was an
	// Error) to the pod's, as it does on a real cluster.
	if out := k.mustKubectl(t, "get", "pod", "deadline", "--no-headers"); !strings.Contains(out, " Error ") {
		t.Errorf("kubectl get pod deadline: %q, want STATUS Error", out)
	}
	if out := k.mustKubectl(t, "describe", "pod", "deadline"); !strings.Contains(out, "Pod was active on the node longer than the specified deadline") {
		t.Errorf("kubectl describe pod deadline lacks the deadline message:\n%s", out)
	}
}

// TestPreStopAndGracePeriod: deleting a pod runs its container's preStop
// hook in the container (here it writes a file the main process waits
// for, and the main process then exits 0), before the stop signal; a
// failing hook is a FailedPreStopHook event, and the container is still
// stopped. A sleeping PID 1, which ignores SIGTERM, is killed when the
// grace period ends.
func TestPreStopAndGracePeriod(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "prestop.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: drain
spec:
  terminationGracePeriodSeconds: 20
  containers:
  - name: c
    image: busybox:1.36
    command: [sh, -c, "echo serving; while [ ! -f /tmp/drained ]; do sleep 0.1; done; echo drained, exiting; exit 0"]
    lifecycle:
      preStop:
        exec:
          command: [sh, -c, "echo preStop ran; touch /tmp/drained"]
---
apiVersion: v1
kind: Pod
metadata:
  name: badhook
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: nginx:1.25
    lifecycle:
      preStop:
        exec:
          command: [sh, -c, "exit 3"]
`))
	for _, name := range []string{"drain", "badhook"} {
		testserver.EventuallyWithin(t, 30*time.Second, name+" is Running", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", name, "-o", "jsonpath={.status.phase}")
			return out == "Running", out
		})
	}
	// drain's main process exits on its own once the hook ran: well
	// within its 20 s grace period.
	start := time.Now()
	k.mustKubectl(t, "delete", "pod", "drain", "badhook")
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("deleting drain and badhook took %v: the hook should end drain at once, badhook's 2 s grace period the other", took)
	}
	kubeletLog, _ := os.ReadFile(c.logs["kubelet-node01"])
	for _, want := range []string{`msg="ran preStop hook" component=kubelet node=node01 pod=default/drain`, `msg="preStop hook failed" component=kubelet node=node01 pod=default/badhook`} {
		if !strings.Contains(string(kubeletLog), want) {
			t.Errorf("kubelet log lacks %s", want)
		}
	}
	events := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=badhook", "-o", "jsonpath={.items[*].reason}")
	if !strings.Contains(events, "FailedPreStopHook") {
		t.Errorf("badhook's events %q lack FailedPreStopHook", events)
	}
}

// A pod's sidecars stop after its app containers, as Kubernetes orders
// it: the app container's preStop hook is an HTTP GET to the pod's own
// netexec sidecar, which dials a handler pod on another node. It works
// only if the sidecar still runs while the hook does, and the pod
// network carries the sidecar's connection across nodes. (Kubernetes'
// "prestop http hook" conformance spec, with kubectl.)
func TestSidecarsStopAfterTheAppContainersPreStop(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01", "node02")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "handler.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: handler
spec:
  nodeName: node02
  containers:
  - name: netexec
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    args: [netexec]
`))
	k.mustKubectl(t, "wait", "--for=condition=Ready", "pod/handler", "--timeout=60s")
	handlerIP := k.mustKubectl(t, "get", "pod", "handler", "-o", "jsonpath={.status.podIP}")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "hooked.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: hooked
spec:
  nodeName: node01
  terminationGracePeriodSeconds: 15
  initContainers:
  - name: redirect
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    args: [netexec, --udp-port, "-1"]
    restartPolicy: Always
    startupProbe:
      httpGet:
        path: /echo?msg=startup
        port: 8080
  containers:
  - name: app
    image: registry.k8s.io/pause:3.10
    lifecycle:
      preStop:
        httpGet:
          path: /dial?host=`+handlerIP+`&port=8080&request=echo%3Fmsg%3Dprestop
          port: 8080
`))
	k.mustKubectl(t, "wait", "--for=condition=Ready", "pod/hooked", "--timeout=60s")
	k.mustKubectl(t, "delete", "pod", "hooked")
	testserver.EventuallyWithin(t, 30*time.Second, "the preStop hook's request in handler's log", func() (bool, string) {
		out, _, _ := k.kubectl(t, "logs", "handler")
		return strings.Contains(out, "GET /echo?msg=prestop"), out
	})
	events := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=hooked", "-o", "jsonpath={.items[*].reason}")
	if strings.Contains(events, "FailedPreStopHook") {
		t.Errorf("hooked's events %q: the hook failed", events)
	}
}
