package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// TestMkubeCrashAndOOM injects faults with `mkube crash` and `mkube oom`
// through the API server's nodes/proxy and the kubelet into the runtime,
// and watches the kubelet restart the container each time as it would
// after a real crash: RESTARTS grows and lastState says how it ended.
func TestMkubeCrashAndOOM(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01",
		flags: []string{"--crash-loop-backoff-initial", "1s", "--crash-loop-backoff-max", "4s"}})
	k := newKubectl(t, c)
	mkube := func(t *testing.T, args ...string) string {
		t.Helper()
		stdout, stderr, code := runCommand(t, exec.Command(filepath.Join(binDir, "mkube"), append(args, "--server", c.URL)...))
		if code != 0 {
			t.Fatalf("mkube %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
		return stdout
	}
	testserver.EventuallyWithin(t, 30*time.Second, "node01 is Ready", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "nodes", "node01", "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}")
		return out == "True", out
	})
	if out := k.mustKubectl(t, "get", "--raw", "/api/v1/nodes/node01/proxy/healthz"); out != "ok" {
		t.Errorf("kubectl get --raw .../nodes/node01/proxy/healthz = %q, want the kubelet's ok", out)
	}

	k.mustKubectl(t, "run", "web", "--image=nginx:1.25")
	// What the pod shows: phase, restarts, and lastState's exit code and reason.
	state := func() string {
		out, _, _ := k.kubectl(t, "get", "pod", "web", "-o", "jsonpath={.status.phase} {.status.containerStatuses[0].restartCount} "+
			"{.status.containerStatuses[0].lastState.terminated.exitCode} {.status.containerStatuses[0].lastState.terminated.reason} "+
			"{.status.containerStatuses[0].state.running.startedAt}")
		return out
	}
	running := func(restarts, last string) {
		t.Helper()
		testserver.EventuallyWithin(t, 60*time.Second, "web runs again after restart "+restarts, func() (bool, string) {
			f := strings.Fields(state())
			return len(f) == 5 && f[0] == "Running" && f[1] == restarts && f[2]+" "+f[3] == last, strings.Join(f, " ")
		})
	}
	testserver.EventuallyWithin(t, 60*time.Second, "web is Running", func() (bool, string) {
		f := strings.Fields(state())
		return len(f) == 3 && f[0] == "Running" && f[1] == "0", strings.Join(f, " ")
	})

	out := mkube(t, "inspect", "web")
	t.Logf("mkube inspect web:\n%s", out)
	if !strings.Contains(out, "80/TCP") || !strings.Contains(out, "/etc/nginx/nginx.conf") {
		t.Errorf("mkube inspect web lacks port 80/TCP or /etc/nginx/nginx.conf")
	}

	if out, want := mkube(t, "crash", "web", "--exit", "3"), "pod default/web: container web exited with code 3 (injected)\n"; out != want {
		t.Errorf("mkube crash: %q, want %q", out, want)
	}
	running("1", "3 Error")

	mkube(t, "oom", "web")
	running("2", "137 OOMKilled")

	// Freezing needs no CRI call, so thawing works on a frozen runtime.
	if out := mkube(t, "freeze", "node01"); !strings.Contains(out, "node node01: container runtime frozen") {
		t.Errorf("mkube freeze: %q", out)
	}
	if out := mkube(t, "thaw", "node01"); out != "node node01: container runtime thawed\n" {
		t.Errorf("mkube thaw: %q", out)
	}

	// A node that is not there is the API server's NotFound.
	if _, stderr, code := k.kubectl(t, "get", "--raw", "/api/v1/nodes/nosuch/proxy/healthz"); code == 0 || !strings.Contains(stderr, "NotFound") {
		t.Errorf("proxy to a missing node: exit %d, %q, want NotFound", code, stderr)
	}
	// A pod that is not there is the API server's NotFound, as kubectl says it.
	_, stderr, code := runCommand(t, exec.Command(filepath.Join(binDir, "mkube"), "crash", "nosuch", "--server", c.URL))
	if code != 1 || !strings.Contains(stderr, `Error from server (NotFound): pods "nosuch" not found`) {
		t.Errorf("mkube crash nosuch: exit %d, %q", code, stderr)
	}
}

// TestAFrozenRuntimeMakesTheNodeNotReady: while its runtime does not
// answer (`mkube freeze`), the kubelet reports its node not Ready,
// "container runtime is down"; thawed, it is Ready again.
func TestAFrozenRuntimeMakesTheNodeNotReady(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01", flags: []string{"--status-interval", "500ms"}})
	k := newKubectl(t, c)
	ready := func() string {
		out, _, _ := k.kubectl(t, "get", "nodes", "node01", "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status} {.status.conditions[?(@.type=='Ready')].message}")
		return out
	}
	testserver.EventuallyWithin(t, 30*time.Second, "node01 is Ready", func() (bool, string) {
		out := ready()
		return strings.HasPrefix(out, "True "), out
	})
	mkube := func(args ...string) {
		if _, stderr, code := runCommand(t, exec.Command(filepath.Join(binDir, "mkube"), append(args, "--server", c.URL)...)); code != 0 {
			t.Fatalf("mkube %v: exit %d: %s", args, code, stderr)
		}
	}
	mkube("freeze", "node01")
	testserver.EventuallyWithin(t, 30*time.Second, "node01 is NotReady: its runtime is down", func() (bool, string) {
		out := ready()
		return strings.HasPrefix(out, "False container runtime is down: "), out
	})
	mkube("thaw", "node01")
	testserver.EventuallyWithin(t, 30*time.Second, "node01 is Ready again", func() (bool, string) {
		out := ready()
		return strings.HasPrefix(out, "True "), out
	})
}

// TestMemoryPressure: pods holding nearly all of a node's memory leave
// it less than the kubelet's eviction threshold (100Mi available): the
// node reports MemoryPressure; once they are gone it does not.
func TestMemoryPressure(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01", flags: []string{"--memory", "1Gi", "--status-interval", "500ms"}})
	k := newKubectl(t, c)
	pressure := func() string {
		out, _, _ := k.kubectl(t, "get", "node", "node01", "-o", "jsonpath={.status.conditions[?(@.type=='MemoryPressure')].status}")
		return out
	}
	testserver.EventuallyWithin(t, 30*time.Second, "node01 has no memory pressure", func() (bool, string) {
		out := pressure()
		return out == "False", out
	})
	k.mustKubectl(t, "run", "hog", "--image=polinux/stress", "--command", "--", "stress", "--vm", "1", "--vm-bytes", "950M", "--vm-hang", "1")
	testserver.EventuallyWithin(t, 30*time.Second, "node01 reports MemoryPressure", func() (bool, string) {
		out := pressure()
		return out == "True", out
	})
	k.mustKubectl(t, "delete", "pod", "hog", "--grace-period", "1")
	testserver.EventuallyWithin(t, 30*time.Second, "node01's memory pressure is over", func() (bool, string) {
		out := pressure()
		return out == "False", out
	})
}

// TestMkubeFailProbes: `mkube fail-probes` makes a container's next probe
// runs fail, whatever their kind: a ready pod turns unready for as many
// runs as the readiness probe's failureThreshold needs, then ready again.
func TestMkubeFailProbes(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01"})
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "ready.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: nginx:1.25
    readinessProbe:
      httpGet: {path: /, port: 80}
      periodSeconds: 1
      failureThreshold: 2
`))
	ready := func(want string) {
		t.Helper()
		testserver.EventuallyWithin(t, 30*time.Second, "web Ready="+want, func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", "web", "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}")
			return out == want, out
		})
	}
	ready("True")
	stdout, stderr, code := runCommand(t, exec.Command(filepath.Join(binDir, "mkube"), "fail-probes", "web", "--count", "4", "--server", c.URL))
	if code != 0 {
		t.Fatalf("mkube fail-probes: exit %d\n%s%s", code, stdout, stderr)
	}
	ready("False")
	ready("True")
	events := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=web,reason=Unhealthy", "-o", "jsonpath={.items[*].message}")
	if !strings.Contains(events, "Readiness probe failed: probe failed: injected by mkube fail-probes") {
		t.Errorf("Unhealthy events: %q", events)
	}
}
