package e2e

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// TestAKubeletDrivesAStandaloneRuntimeThatCrictlSees runs a kubelet with
// --container-runtime-endpoint pointing at a bin/runtime of its own, as a
// real node's kubelet points at containerd. The pod the kubelet runs is
// then in that runtime for crictl to see, under the kubelet's labels, and
// `kubectl logs` reads the log file the runtime wrote.
func TestAKubeletDrivesAStandaloneRuntimeThatCrictlSees(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil) // no nodes yet
	rt := startStandaloneRuntime(t, c, "--pod-cidr", "10.88.0.0/16", "--node-root", filepath.Join(c.dir, "nodes"))
	crictl, endpoint := rt.crictl, rt.endpoint
	c.startKubelet("kubelet-node01", kubeletNode{name: "node01", flags: []string{"--container-runtime-endpoint", endpoint}})

	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "node01 is Ready", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "nodes", "node01", "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status} {.status.nodeInfo.containerRuntimeVersion}")
		return out == "True mkube://v0.1.0", out
	})
	k.mustKubectl(t, "run", "web", "--image=nginx:1.25")
	testserver.EventuallyWithin(t, 30*time.Second, "pod web is Running", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "web", "-o", "jsonpath={.status.phase} {.status.podIP}")
		return strings.HasPrefix(out, "Running 10.88."), out
	})

	// crictl finds the kubelet's container by the kubelet's labels.
	ps := parseTable(t, crictl.must(t, "ps", "--label", "io.kubernetes.pod.name=web"))
	if len(ps.rows) != 1 {
		t.Fatalf("crictl ps --label io.kubernetes.pod.name=web: %v, want the one container of pod web", ps.rows)
	}
	row := ps.rows[0]
	if row["NAME"] != "web" || row["STATE"] != "Running" || row["POD"] != "web" || row["NAMESPACE"] != "default" || row["ATTEMPT"] != "0" {
		t.Errorf("crictl ps row %v, want container web Running in pod default/web, attempt 0", row)
	}
	ins := crictl.inspect(t, "inspect", row["CONTAINER"])
	labels, _ := field(ins, "status", "labels").(map[string]any)
	for key, want := range map[string]string{"io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "default",
		"io.kubernetes.container.name": "web"} {
		if labels[key] != want {
			t.Errorf("container label %s = %v, want %s (labels %v)", key, labels[key], want, labels)
		}
	}
	uid := strings.TrimSpace(k.mustKubectl(t, "get", "pod", "web", "-o", "jsonpath={.metadata.uid}"))
	if labels["io.kubernetes.pod.uid"] != uid {
		t.Errorf("container label io.kubernetes.pod.uid = %v, want the pod's uid %s", labels["io.kubernetes.pod.uid"], uid)
	}
	// The pod status names the container as the runtime does.
	if id := k.mustKubectl(t, "get", "pod", "web", "-o", "jsonpath={.status.containerStatuses[0].containerID}"); id != "mkube://"+field(ins, "status", "id").(string) {
		t.Errorf("containerID %q, want mkube:// and the runtime's ID %v", id, field(ins, "status", "id"))
	}

	// kubectl logs reads the file the runtime wrote: what nginx printed.
	testserver.EventuallyWithin(t, 30*time.Second, "kubectl logs web shows nginx's startup", func() (bool, string) {
		out, _, _ := k.kubectl(t, "logs", "web")
		return strings.Contains(out, "[notice] 1#1: start worker processes\n"), out
	})

	// A new image is a new container, attempt 1; the one it replaced
	// stays exited in the runtime, for lastState and `logs --previous`.
	k.mustKubectl(t, "set", "image", "pod/web", "web=nginx:1.26")
	testserver.EventuallyWithin(t, 30*time.Second, "web restarted with nginx:1.26", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "web", "-o", "jsonpath={.status.containerStatuses[0].image} {.status.containerStatuses[0].restartCount}")
		return out == "nginx:1.26 1", out
	})
	if out := k.mustKubectl(t, "logs", "web", "--previous"); !strings.Contains(out, "signal 3 (SIGQUIT) received, shutting down\n") || !strings.HasSuffix(out, "[notice] 1#1: exit\n") {
		t.Errorf("kubectl logs web --previous:\n%s\nwant attempt 0's shutdown, ending with its exit", out)
	}
	testserver.EventuallyWithin(t, 30*time.Second, "attempt 1 printed its startup", func() (bool, string) {
		out, _, _ := k.kubectl(t, "logs", "web")
		return strings.Contains(out, "start worker process 29\n"), out
	})
	if out := k.mustKubectl(t, "logs", "web", "--timestamps", "--tail=1"); !timestamped.MatchString(out) || !strings.HasSuffix(out, " start worker process 29\n") {
		t.Errorf("kubectl logs web --timestamps --tail=1: %q, want the last line after its time", out)
	}
	all := parseTable(t, crictl.must(t, "ps", "-a", "--label", "io.kubernetes.container.name=web"))
	if len(all.rows) != 2 {
		t.Errorf("crictl ps -a: %v, want attempt 1 running and attempt 0 exited", all.rows)
	}

	// `crictl stop` behind the kubelet's back is a crash like any other:
	// SIGKILL (exit 137), and the kubelet restarts the container as its
	// restart policy (Always) says.
	running := parseTable(t, crictl.must(t, "ps", "--label", "io.kubernetes.container.name=web"))
	if len(running.rows) != 1 {
		t.Fatalf("crictl ps: %v, want attempt 1 running", running.rows)
	}
	crictl.must(t, "stop", running.rows[0]["CONTAINER"])
	testserver.EventuallyWithin(t, 30*time.Second, "the kubelet restarted web after crictl stop", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "web", "-o", "jsonpath={.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].lastState.terminated.exitCode} {.status.containerStatuses[0].state.running.startedAt}")
		f := strings.Fields(out)
		return len(f) == 3 && f[0] == "2" && f[1] == "137", out
	})

	// Deleting the pod stops and removes its sandbox in the runtime.
	k.mustKubectl(t, "delete", "pod", "web")
	testserver.EventuallyWithin(t, 30*time.Second, "the pod's sandbox is gone from the runtime", func() (bool, string) {
		out := crictl.must(t, "pods", "--label", "io.kubernetes.pod.name=web", "-q")
		return strings.TrimSpace(out) == "", out
	})
}

var timestamped = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z `)

// A kubelet whose runtime does not answer exits at once, saying why,
// rather than wait for the API server or hang.
func TestAKubeletWithoutItsRuntimeExitsSayingWhy(t *testing.T) {
	t.Parallel()
	endpoint := "unix://" + filepath.Join(t.TempDir(), "nobody.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "kubelet"), "--server", "http://127.0.0.1:1",
		"--node-name", "node01", "--container-runtime-endpoint", endpoint, "--pod-logs-dir", t.TempDir())
	_, errOut, code := runCommand(t, cmd)
	if code != 1 || !strings.Contains(errOut, "container runtime "+endpoint+" is not answering") {
		t.Errorf("kubelet without its runtime: exit %d, stderr:\n%s\nwant exit 1 saying the runtime is not answering", code, errOut)
	}
}

// A kubelet whose port is taken exits at once, saying why, before it
// waits for the API server.
func TestAKubeletWhosePortIsTakenExitsSayingWhy(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "kubelet"), "--server", "http://127.0.0.1:1",
		"--node-name", "node01", "--address", "127.0.0.1", "--port", port, "--pod-logs-dir", t.TempDir())
	_, errOut, code := runCommand(t, cmd)
	if code != 1 || !strings.Contains(errOut, "kubelet API: listen tcp 127.0.0.1:"+port+": bind: address already in use") {
		t.Errorf("kubelet on a taken port: exit %d, stderr:\n%s\nwant exit 1 saying the address is in use", code, errOut)
	}
}

// An extended resource a user patches into the node's status.capacity,
// as the Kubernetes docs advertise one, survives the kubelet's heartbeats
// and is allocatable to pods.
func TestExtendedResourcesSurviveHeartbeats(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01", flags: []string{"--status-interval", "200ms"}})
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "node01 registered", func() (bool, string) {
		out, _, code := k.kubectl(t, "get", "node", "node01")
		return code == 0, out
	})
	k.mustKubectl(t, "patch", "node", "node01", "--subresource=status", "--type=json",
		"-p", `[{"op":"add","path":"/status/capacity/example.com~1dongle","value":"4"}]`)
	before := k.mustKubectl(t, "get", "node", "node01", "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].lastHeartbeatTime}")
	testserver.EventuallyWithin(t, 30*time.Second, "two heartbeats later the dongle is still there, and allocatable", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "node", "node01", "-o",
			`jsonpath={.status.conditions[?(@.type=='Ready')].lastHeartbeatTime} {.status.capacity.example\.com/dongle} {.status.allocatable.example\.com/dongle}`)
		f := strings.Fields(out)
		return len(f) == 3 && f[0] != before && f[1] == "4" && f[2] == "4", out
	})
}
