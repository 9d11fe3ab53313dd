package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// crictlRunner runs the real crictl against one runtime socket, with an
// empty config file of its own (so /etc/crictl.yaml of the machine plays
// no part) and a fresh home directory.
type crictlRunner struct {
	bin  string
	args []string // the endpoint and config flags every call gets
	env  []string
}

// findCrictl returns the crictl that `make tools` installs at bin/crictl
// in the repository, or else one on PATH. Without one the test fails: the
// CRI boundary is only shown if the real client drives it.
func findCrictl(t *testing.T) string {
	t.Helper()
	if abs, err := filepath.Abs(filepath.Join("..", "bin", "crictl")); err == nil {
		if _, err := os.Stat(abs); err == nil {
			return abs
		}
	}
	if path, err := exec.LookPath("crictl"); err == nil {
		return path
	}
	t.Fatal("crictl is neither at bin/crictl nor on PATH: `make tools` installs it (sigs.k8s.io/cri-tools/cmd/crictl@v1.37.0)")
	return ""
}

func newCrictl(t *testing.T, endpoint string) *crictlRunner {
	t.Helper()
	home := t.TempDir()
	config := filepath.Join(home, "crictl.yaml")
	if err := os.WriteFile(config, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return &crictlRunner{bin: findCrictl(t),
		args: []string{"--config", config, "--runtime-endpoint", endpoint, "--image-endpoint", endpoint, "--timeout", "10s"},
		env:  append(os.Environ(), "HOME="+home)}
}

// standaloneRuntime is bin/runtime on a socket of its own, as a node runs
// containerd beside its kubelet, with the real crictl pointed at it.
type standaloneRuntime struct {
	c        *cluster // whose startAs ran it: its procs and logs hold "runtime"
	crictl   *crictlRunner
	dir      string // a short temp dir: a socket path has at most 108 bytes
	socket   string
	endpoint string // unix://socket
}

// startStandaloneRuntime starts bin/runtime with flags and returns once
// crictl version answers. c is the cluster it belongs to, or nil for a
// runtime alone (a "cluster" of one process: startAs and dumpLogs serve
// any binary), whose log is shown if the test fails.
func startStandaloneRuntime(t *testing.T, c *cluster, flags ...string) *standaloneRuntime {
	t.Helper()
	dir, err := os.MkdirTemp("", "mkube-cri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if c == nil {
		c = &cluster{t: t, logs: map[string]string{}}
		t.Cleanup(func() {
			if t.Failed() {
				c.dumpLogs()
			}
		})
	}
	// The socket's directory does not exist yet: the runtime makes it.
	socket := filepath.Join(dir, "run", "runtime.sock")
	rt := &standaloneRuntime{c: c, crictl: newCrictl(t, "unix://"+socket), dir: dir, socket: socket, endpoint: "unix://" + socket}
	c.startAs("runtime", "runtime", append([]string{"--listen", rt.endpoint}, flags...)...)
	testserver.EventuallyWithin(t, 30*time.Second, "the runtime serves CRI", func() (bool, string) {
		out, errOut, code := rt.crictl.run(t, "version")
		return code == 0, out + errOut
	})
	return rt
}

// run runs crictl with args and returns its stdout, stderr and exit code.
func (c *crictlRunner) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append(append([]string{}, c.args...), args...)...)
	cmd.Env = c.env
	return runCommand(t, cmd)
}

// must runs crictl and fails the test unless it exits 0.
func (c *crictlRunner) must(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := c.run(t, args...)
	if code != 0 {
		t.Fatalf("crictl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// inspect runs an inspect command and decodes its JSON.
func (c *crictlRunner) inspect(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out := c.must(t, args...)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("crictl %s: %v in\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// field walks a decoded JSON object: field(v, "status", "state").
func field(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

var fullID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestCrictlAgainstTheRuntime starts bin/runtime alone and drives it with
// the real crictl through a pod's whole life, as a learner at a node's
// shell would: pull, runp, create, start, ps, pods, inspect, logs, stop,
// rm, stopp, rmp.
func TestCrictlAgainstTheRuntime(t *testing.T) {
	t.Parallel()
	rt := startStandaloneRuntime(t, nil)
	crictl, dir, endpoint := rt.crictl, rt.dir, rt.endpoint

	// version and info: who the runtime is, and that it is ready.
	if out := crictl.must(t, "version"); !strings.Contains(out, "RuntimeName:  mkube") || !strings.Contains(out, "RuntimeApiVersion:  v1") {
		t.Errorf("crictl version:\n%s\nwant RuntimeName mkube and RuntimeApiVersion v1", out)
	}
	info := crictl.inspect(t, "info")
	conditions, _ := field(info, "status", "conditions").([]any)
	for _, want := range []string{"RuntimeReady", "NetworkReady"} {
		ok := false
		for _, c := range conditions {
			ok = ok || field(c, "type") == want && field(c, "status") == true
		}
		if !ok {
			t.Errorf("crictl info conditions %v: want %s true", conditions, want)
		}
	}

	// pull and images: the short name becomes containerd's full one.
	out := crictl.must(t, "pull", "nginx:1.25")
	imageID, ok := strings.CutPrefix(strings.TrimSpace(out), "Image is up to date for sha256:")
	if !ok || len(imageID) != 64 {
		t.Fatalf("crictl pull nginx:1.25: %q, want the image ID", out)
	}
	img := parseTable(t, crictl.must(t, "images")).row(t, "IMAGE", "docker.io/library/nginx")
	if img["TAG"] != "1.25" || img["IMAGE ID"] != imageID[:13] {
		t.Errorf("crictl images row %v, want tag 1.25 and image ID %s", img, imageID[:13])
	}

	// runp: a sandbox, configured as the kubelet would (labels, log dir).
	logDir := filepath.Join(dir, "pods", "default_web_uid-web")
	pod := writeJSON(t, dir, "pod.json", map[string]any{
		"metadata":      map[string]any{"name": "web", "namespace": "default", "uid": "uid-web"},
		"log_directory": logDir,
		"labels":        map[string]string{"io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "default", "io.kubernetes.pod.uid": "uid-web"},
	})
	podID := strings.TrimSpace(crictl.must(t, "runp", pod))
	if !fullID.MatchString(podID) {
		t.Fatalf("crictl runp printed %q, want a 64-hex sandbox ID", podID)
	}
	container := func(name, image string) string {
		return writeJSON(t, dir, name+".json", map[string]any{
			"metadata": map[string]any{"name": name},
			"image":    map[string]any{"image": image},
			"command":  []string{"nginx"}, "args": []string{"-g", "daemon off;"},
			"envs":     []map[string]string{{"key": "MODE", "value": "demo"}},
			"log_path": name + "/0.log",
			"labels": map[string]string{"io.kubernetes.container.name": name, "io.kubernetes.pod.name": "web",
				"io.kubernetes.pod.namespace": "default", "io.kubernetes.pod.uid": "uid-web"},
		})
	}

	// create refuses an image that was not pulled, as containerd does.
	if _, errOut, code := crictl.run(t, "create", podID, container("cache", "redis:7"), pod); code == 0 || !strings.Contains(errOut, `code = NotFound desc = image \"redis:7\" not found`) {
		t.Errorf("crictl create with an image not pulled: exit %d, stderr %q; want a NotFound error", code, errOut)
	}

	// create and start two containers of the pod.
	ids := map[string]string{}
	for _, name := range []string{"nginx", "sidecar"} {
		id := strings.TrimSpace(crictl.must(t, "create", podID, container(name, "nginx:1.25"), pod))
		if !fullID.MatchString(id) {
			t.Fatalf("crictl create printed %q, want a 64-hex container ID", id)
		}
		if out := strings.TrimSpace(crictl.must(t, "start", id)); out != id {
			t.Errorf("crictl start printed %q, want %s", out, id)
		}
		ids[name] = id
	}

	// ps and pods: the names come from the kubelet's labels.
	ps := parseTable(t, crictl.must(t, "ps"))
	row := ps.row(t, "NAME", "nginx")
	if row["CONTAINER"] != ids["nginx"][:13] || row["STATE"] != "Running" || row["POD ID"] != podID[:13] ||
		row["POD"] != "web" || row["NAMESPACE"] != "default" || row["ATTEMPT"] != "0" {
		t.Errorf("crictl ps row %v, want container %s Running in pod web (%s)", row, ids["nginx"][:13], podID[:13])
	}
	pods := parseTable(t, crictl.must(t, "pods", "--label", "io.kubernetes.pod.name=web"))
	if len(pods.rows) != 1 || pods.rows[0]["POD ID"] != podID[:13] || pods.rows[0]["STATE"] != "Ready" || pods.rows[0]["NAMESPACE"] != "default" {
		t.Errorf("crictl pods --label io.kubernetes.pod.name=web: %v, want sandbox %s Ready", pods.rows, podID[:13])
	}

	// inspect takes the short ID crictl prints; inspectp shows the IP.
	ins := crictl.inspect(t, "inspect", ids["nginx"][:13])
	if field(ins, "status", "id") != ids["nginx"] || field(ins, "status", "state") != "CONTAINER_RUNNING" ||
		field(ins, "status", "image", "image") != "docker.io/library/nginx:1.25" || field(ins, "info", "pid") != 0.0 ||
		strings.Join(toStrings(field(ins, "info", "config", "command")), " ") != "nginx" {
		t.Errorf("crictl inspect: %v\nwant the running container with its image, pid 0 and command", ins)
	}
	insp := crictl.inspect(t, "inspectp", podID)
	if field(insp, "status", "state") != "SANDBOX_READY" || field(insp, "status", "network", "ip") != "10.88.0.2" {
		t.Errorf("crictl inspectp: %v\nwant a ready sandbox with IP 10.88.0.2", insp)
	}

	// logs: what the container printed, from its CRI log file; nginx
	// prints its notices on stderr, which crictl copies to its own.
	testserver.Eventually(t, "nginx printed its startup notices", func() (bool, string) {
		_, logs, _ := crictl.run(t, "logs", ids["nginx"])
		return strings.Contains(logs, "[notice] 1#1: start worker processes\n"), logs
	})
	file, err := os.ReadFile(filepath.Join(logDir, "nginx", "0.log"))
	if err != nil || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+ stderr F \d{4}/\d\d/\d\d \S+ \[notice\] 1#1: using the "epoll" event method`).Match(file) {
		t.Errorf("log file (err %v):\n%s\nwant lines in the CRI format <RFC3339Nano> stderr F <text>", err, file)
	}

	// stop: crictl's default timeout of 0 is a SIGKILL (exit 137); with a
	// grace period nginx gets its stop signal, shuts down and exits 0.
	crictl.must(t, "stop", ids["nginx"])
	crictl.must(t, "stop", "--timeout", "10", ids["sidecar"])
	if ps := parseTable(t, crictl.must(t, "ps")); len(ps.rows) != 0 {
		t.Errorf("crictl ps after stop: %v, want no running container", ps.rows)
	}
	all := parseTable(t, crictl.must(t, "ps", "-a"))
	for name, want := range map[string][2]any{"nginx": {137.0, "Error"}, "sidecar": {0.0, "Completed"}} {
		if state := all.row(t, "NAME", name)["STATE"]; state != "Exited" {
			t.Errorf("crictl ps -a: %s is %s, want Exited", name, state)
		}
		ins := crictl.inspect(t, "inspect", ids[name])
		if code, reason := field(ins, "status", "exitCode"), field(ins, "status", "reason"); code != want[0] || reason != want[1] {
			t.Errorf("crictl inspect %s after stop: exit code %v reason %v, want %v %v", name, code, reason, want[0], want[1])
		}
	}
	if _, logs, _ := crictl.run(t, "logs", ids["sidecar"]); !strings.Contains(logs, "signal 3 (SIGQUIT) received, shutting down\n") ||
		!strings.HasSuffix(logs, "[notice] 1#1: exit\n") {
		t.Errorf("crictl logs of the container stopped with a grace period:\n%s\nwant nginx's shutdown, ending in its exit", logs)
	}

	// rm, stopp, rmp: removing the sandbox removes what is left in it.
	crictl.must(t, "rm", ids["nginx"])
	if all := parseTable(t, crictl.must(t, "ps", "-a")); len(all.rows) != 1 || all.rows[0]["NAME"] != "sidecar" {
		t.Errorf("crictl ps -a after rm: %v, want only sidecar", all.rows)
	}
	if out := crictl.must(t, "stopp", podID); !strings.Contains(out, "Stopped sandbox "+podID) {
		t.Errorf("crictl stopp: %q", out)
	}
	if state := parseTable(t, crictl.must(t, "pods")).row(t, "POD ID", podID[:13])["STATE"]; state != "NotReady" {
		t.Errorf("crictl pods after stopp: %s, want NotReady", state)
	}
	if out := crictl.must(t, "rmp", podID); !strings.Contains(out, "Removed sandbox "+podID) {
		t.Errorf("crictl rmp: %q", out)
	}
	if pods, all := parseTable(t, crictl.must(t, "pods")), parseTable(t, crictl.must(t, "ps", "-a")); len(pods.rows)+len(all.rows) != 0 {
		t.Errorf("after rmp: pods %v, containers %v; want none", pods.rows, all.rows)
	}

	// The runtime's log tells, in plain words, what it was asked.
	logged, _ := os.ReadFile(rt.c.logs["runtime"])
	for _, want := range []string{`msg="pulled image"`, `msg="ran pod sandbox"`, `msg="created container"`,
		`msg="started container"`, `msg="killed container"`, `msg="sent SIGTERM to container"`, `msg="container exited"`, `msg="removed pod sandbox"`} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("runtime log lacks %s", want)
		}
	}

	// A second runtime on the same socket exits at once, saying why.
	second := exec.Command(filepath.Join(binDir, "runtime"), "--listen", endpoint)
	if out, err := second.CombinedOutput(); second.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "another process is listening") {
		t.Errorf("a second runtime on %s: %v\n%s\nwant exit 1 saying the socket is in use", endpoint, err, out)
	}

	// SIGTERM stops the runtime gracefully, and its socket goes with it.
	rt.c.procs["runtime"].Signal(syscall.SIGTERM)
	testserver.EventuallyWithin(t, 10*time.Second, "the stopped runtime removed its socket", func() (bool, string) {
		_, err := os.Lstat(rt.socket)
		return os.IsNotExist(err), "stat: " + errString(err)
	})

	// So does a runtime given an endpoint that is not a unix socket.
	bad := exec.Command(filepath.Join(binDir, "runtime"), "--listen", "tcp://127.0.0.1:1234")
	if out, err := bad.CombinedOutput(); bad.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "want unix:///path/to/socket") {
		t.Errorf("runtime --listen tcp://...: %v\n%s\nwant exit 1 saying what an endpoint looks like", err, out)
	}
}

func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, s := range list {
		out[i], _ = s.(string)
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return "exists"
	}
	return err.Error()
}
