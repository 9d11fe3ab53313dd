package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mkube/mkube/internal/testserver"
)

// The streams: kubectl exec, cp, attach, run -it and port-forward, each
// the real kubectl through the API server's pods/exec, /attach and
// /portforward, the kubelet's /exec, /attach and /portForward, and the
// runtime's streaming server; and the real crictl exec -it against a
// runtime alone. The interactive ones run kubectl on a pseudo-terminal,
// as a user's shell would, so kubectl puts it in raw mode and the
// runtime's terminal does the echo and line editing.

const execPods = `apiVersion: v1
kind: Pod
metadata:
  name: box
spec:
  containers:
  - name: box
    image: busybox
    command: ["sleep", "3600"]
---
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: nginx
    image: nginx:1.25
    ports:
    - containerPort: 80
---
apiVersion: v1
kind: Pod
metadata:
  name: ticker
spec:
  containers:
  - name: ticker
    image: busybox
    command: ["sh", "-c", "while true; do echo tick; sleep 1; done"]
---
apiVersion: v1
kind: Pod
metadata:
  name: half
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sleep", "3600"]
  - name: done
    image: busybox
    command: ["sh", "-c", "exit 1"]
`

func TestKubectlExecAttachCpAndPortForward(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "node01 is Ready", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "nodes", "node01", "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}")
		return out == "True", out
	})
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "pods.yaml", execPods))
	for _, pod := range []string{"box", "web", "ticker"} {
		testserver.EventuallyWithin(t, 30*time.Second, "pod "+pod+" is Running", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", pod, "-o", "jsonpath={.status.phase}")
			return out == "Running", out
		})
	}
	// kubectl 1.32 speaks WebSocket (v5.channel.k8s.io) first, which the
	// API server translates to SPDY for the kubelet; without it, SPDY
	// end to end. Both must give the same answers.
	spdy := *k
	spdy.env = append(append([]string{}, k.env...), "KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false")
	for _, proto := range []struct {
		name string
		k    *kubectlRunner
	}{{"WebSocket", k}, {"SPDY", &spdy}} {
		k := proto.k
		t.Run(proto.name+": exec prints the command's output", func(t *testing.T) {
			if out := k.mustKubectl(t, "exec", "box", "--", "cat", "/etc/hostname"); out != "box\n" {
				t.Errorf("kubectl exec box -- cat /etc/hostname: %q, want %q", out, "box\n")
			}
			out := k.mustKubectl(t, "exec", "web", "--", "sh", "-c", "echo $HOSTNAME; echo to-stderr >&2")
			if out != "web\n" {
				t.Errorf("stdout %q, want the pod's hostname", out)
			}
		})
		t.Run(proto.name+": the command's exit code is kubectl's", func(t *testing.T) {
			_, errOut, code := k.kubectl(t, "exec", "box", "--", "sh", "-c", "exit 3")
			if code != 3 || errOut != "command terminated with exit code 3\n" {
				t.Errorf("kubectl exec box -- sh -c 'exit 3': exit %d, stderr %q; want 3 and kubectl's message", code, errOut)
			}
		})
		t.Run(proto.name+": stdin reaches the command, and what it writes the container keeps", func(t *testing.T) {
			cmd := k.command(context.Background(), "exec", "-i", "box", "--", "cat")
			cmd.Stdin = strings.NewReader("hi\n")
			if out, errOut, code := runCommand(t, cmd); out != "hi\n" || code != 0 {
				t.Errorf("echo hi | kubectl exec -i box -- cat: %q, exit %d, stderr %q", out, code, errOut)
			}
			cmd = k.command(context.Background(), "exec", "-i", "box", "--", "sh", "-c", "cat > /tmp/from-stdin")
			cmd.Stdin = strings.NewReader("kept " + proto.name + "\n")
			if _, errOut, code := runCommand(t, cmd); code != 0 {
				t.Fatalf("kubectl exec -i box -- sh -c 'cat > /tmp/from-stdin': exit %d, stderr %q", code, errOut)
			}
			if out := k.mustKubectl(t, "exec", "box", "--", "cat", "/tmp/from-stdin"); out != "kept "+proto.name+"\n" {
				t.Errorf("the file the last exec wrote: %q", out)
			}
		})
	}

	t.Run("exec -it gives an interactive shell on a terminal", func(t *testing.T) {
		term := startOnTerminal(t, k.command(context.Background(), "exec", "-it", "box", "--", "sh"))
		term.shows(t, "/ # ")
		term.typeKeys(t, "echo $HOSTNAME\r")
		term.shows(t, "/ # echo $HOSTNAME\r\nbox\r\n/ # ")
		term.typeKeys(t, "GREETING=hello\r")
		term.typeKeys(t, "echo $GREETING again\r")
		term.shows(t, "hello again\r\n")
		term.typeKeys(t, "sleep 600\r")
		term.shows(t, "sleep 600\r\n")
		// Ctrl-C interrupts the sleep; had the shell not read the line yet,
		// it flushes the line: the screen is the same either way.
		term.typeKeys(t, "\x03")
		term.shows(t, "^C\r\n/ # ")
		term.typeKeys(t, "exit 2\r")
		if code := term.exits(t); code != 2 {
			t.Errorf("kubectl exec -it box -- sh, then exit 2: kubectl exited %d, want 2; screen:\n%q", code, term.screen())
		}
		t.Logf("screen:\n%q", term.screen())
	})
	t.Run("bash prompts as root at the pod's hostname", func(t *testing.T) {
		term := startOnTerminal(t, k.command(context.Background(), "exec", "-it", "web", "--", "bash"))
		term.shows(t, "root@web:/# ")
		term.typeKeys(t, "exit\r")
		if code := term.exits(t); code != 0 {
			t.Errorf("exit: kubectl exited %d; screen:\n%q", code, term.screen())
		}
	})

	t.Run("cp copies a file and a directory into the pod and back", func(t *testing.T) {
		local := t.TempDir()
		os.WriteFile(filepath.Join(local, "notes.txt"), []byte("from the host\n"), 0o644)
		os.MkdirAll(filepath.Join(local, "site", "css"), 0o755)
		os.WriteFile(filepath.Join(local, "site", "index.html"), []byte("<h1>hi</h1>\n"), 0o644)
		os.WriteFile(filepath.Join(local, "site", "css", "main.css"), []byte("h1 {}\n"), 0o644)
		k.mustKubectl(t, "cp", filepath.Join(local, "notes.txt"), "box:/tmp/notes.txt")
		k.mustKubectl(t, "cp", filepath.Join(local, "site"), "box:/tmp/site")
		if out := k.mustKubectl(t, "exec", "box", "--", "cat", "/tmp/notes.txt", "/tmp/site/index.html", "/tmp/site/css/main.css"); out != "from the host\n<h1>hi</h1>\nh1 {}\n" {
			t.Errorf("the files copied in: %q", out)
		}
		k.mustKubectl(t, "exec", "box", "--", "sh", "-c", "mkdir -p /data/out; echo made in the pod > /data/out/report.txt")
		back := t.TempDir()
		out, errOut, code := k.kubectl(t, "cp", "box:/data/out/report.txt", filepath.Join(back, "report.txt"))
		if code != 0 {
			t.Fatalf("kubectl cp box:/data/out/report.txt: exit %d, stderr %q", code, errOut)
		}
		// kubectl passes tar's stderr on, to its own stdout.
		if out != "tar: removing leading '/' from member names\n" || errOut != "" {
			t.Errorf("kubectl cp's stdout %q, stderr %q; want busybox tar's warning on stdout", out, errOut)
		}
		k.mustKubectl(t, "cp", "box:/tmp/site", filepath.Join(back, "site"))
		for name, want := range map[string]string{"report.txt": "made in the pod\n", "site/index.html": "<h1>hi</h1>\n", "site/css/main.css": "h1 {}\n"} {
			if got, err := os.ReadFile(filepath.Join(back, name)); err != nil || string(got) != want {
				t.Errorf("%s copied back: %q, %v; want %q", name, got, err, want)
			}
		}
	})

	t.Run("errors are Kubernetes'", func(t *testing.T) {
		testserver.EventuallyWithin(t, 30*time.Second, "pod half has one container running and one exited", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", "half", "-o", `jsonpath={.status.phase} {.status.containerStatuses[?(@.name=="done")].state.terminated.exitCode}`)
			return out == "Running 1", out
		})
		k.mustKubectl(t, "run", "finished", "--image=busybox", "--restart=Never", "--", "true")
		testserver.EventuallyWithin(t, 30*time.Second, "pod finished has Succeeded", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", "finished", "-o", "jsonpath={.status.phase}")
			return out == "Succeeded", out
		})
		tests := []struct {
			name   string
			k      *kubectlRunner
			args   []string
			stderr *regexp.Regexp
		}{
			{"a program the image does not have", k, []string{"exec", "box", "--", "nosuch"},
				regexp.MustCompile(`^error: Internal error occurred: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "[0-9a-f]{64}": OCI runtime exec failed: exec failed: unable to start container process: exec: "nosuch": executable file not found in \$PATH: unknown\n$`)},
			{"the same over SPDY", &spdy, []string{"exec", "box", "--", "nosuch"},
				regexp.MustCompile(`^error: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "[0-9a-f]{64}": OCI runtime exec failed: .*executable file not found in \$PATH: unknown\n$`)},
			{"a container the pod does not have", k, []string{"exec", "box", "-c", "nope", "--", "true"},
				regexp.MustCompile(`^Error from server \(BadRequest\): container nope is not valid for pod box\n$`)},
			{"a container that is not running (it exited)", &spdy, []string{"exec", "half", "-c", "done", "--", "true"},
				regexp.MustCompile(`^error: unable to upgrade connection: container not found \("done"\)\n$`)},
			{"the same over WebSocket, which the API server translates", k, []string{"exec", "half", "-c", "done", "--", "true"},
				regexp.MustCompile(`^error: Internal error occurred: unable to upgrade connection: container not found \("done"\)\n$`)},
			{"a pod that has completed, which kubectl itself refuses", k, []string{"exec", "finished", "--", "true"},
				regexp.MustCompile(`^error: cannot exec into a container in a completed pod; current phase is Succeeded\n$`)},
		}
		for _, tt := range tests {
			_, errOut, code := tt.k.kubectl(t, tt.args...)
			if code != 1 || !tt.stderr.MatchString(errOut) {
				t.Errorf("%s: kubectl %s: exit %d, stderr %q; want 1 and %s", tt.name, strings.Join(tt.args, " "), code, errOut, tt.stderr)
			}
		}
	})

	t.Run("attach streams what the main process prints", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cmd := k.command(ctx, "attach", "ticker")
		out := startReading(t, cmd)
		testserver.EventuallyWithin(t, 20*time.Second, "kubectl attach shows ticks", func() (bool, string) {
			s := out.String()
			return strings.Count(s, "tick\n") >= 2, s
		})
	})

	t.Run("run -it --rm attaches to a shell, and the pod goes once it exits", func(t *testing.T) {
		term := startOnTerminal(t, k.command(context.Background(), "run", "-it", "--rm", "tmp", "--image=busybox", "--restart=Never", "--", "sh"))
		term.shows(t, "If you don't see a command prompt, try pressing enter.")
		term.typeKeys(t, "\r")
		term.shows(t, "/ # ")
		term.typeKeys(t, "echo inside $HOSTNAME\r")
		term.shows(t, "inside tmp\r\n")
		term.typeKeys(t, "exit 5\r")
		term.exits(t)
		term.shows(t, `pod "tmp" deleted`)
		t.Logf("screen:\n%q", term.screen())
	})

	// kubectl 1.32 port-forwards through a WebSocket that tunnels SPDY,
	// which the API server unwraps for the kubelet; without it, SPDY.
	// -v=4 shows which: a fallback is logged.
	spdyForward := *k
	spdyForward.env = append(append([]string{}, k.env...), "KUBECTL_PORT_FORWARD_WEBSOCKETS=false")
	for _, proto := range []struct {
		name string
		k    *kubectlRunner
	}{{"WebSocket", k}, {"SPDY", &spdyForward}} {
		t.Run(proto.name+": port-forward reaches nginx in the pod", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := startReading(t, proto.k.command(ctx, "port-forward", "-v=4", "pod/web", ":80"))
			forwarding := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 80`)
			var port string
			testserver.EventuallyWithin(t, 20*time.Second, "kubectl port-forward listens", func() (bool, string) {
				m := forwarding.FindStringSubmatch(out.String())
				if m != nil {
					port = m[1]
				}
				return m != nil, out.String()
			})
			for i := 0; i < 2; i++ { // each connection is a new stream
				resp, err := http.Get("http://127.0.0.1:" + port + "/")
				if err != nil {
					t.Fatalf("GET through the forwarded port: %v", err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !strings.Contains(string(body), "<title>Welcome to nginx!</title>") {
					t.Errorf("GET / through port-forward: %s\n%s", resp.Status, body)
				}
			}
			log := out.String()
			if !strings.Contains(log, "Handling connection for "+port) {
				t.Errorf("kubectl port-forward's output:\n%s", log)
			}
			if tunnelled, fellBack := strings.Contains(log, "Before WebSocket Upgrade Connection"), strings.Contains(log, "fallback to secondary dialer"); fellBack || tunnelled != (proto.name == "WebSocket") {
				t.Errorf("kubectl port-forward -v=4 (tunnelled %v, fell back %v):\n%s", tunnelled, fellBack, log)
			}
		})
	}
}

// TestCrictlExecAgainstAStandaloneRuntime drives the runtime's streaming
// server as a node's admin does, with the real crictl: `crictl exec` of a
// command, its exit code, and `crictl exec -it` of a shell on a terminal.
func TestCrictlExecAgainstAStandaloneRuntime(t *testing.T) {
	t.Parallel()
	rt := startStandaloneRuntime(t, nil, "--streaming-address", "127.0.0.1:0")
	crictl, dir := rt.crictl, rt.dir
	crictl.must(t, "pull", "busybox")
	pod := writeJSON(t, dir, "pod.json", map[string]any{"metadata": map[string]any{"name": "box", "namespace": "default", "uid": "uid-box"}, "hostname": "box"})
	podID := strings.TrimSpace(crictl.must(t, "runp", pod))
	ctr := writeJSON(t, dir, "ctr.json", map[string]any{"metadata": map[string]any{"name": "box"}, "image": map[string]any{"image": "busybox"},
		"command": []string{"sleep", "3600"}})
	id := strings.TrimSpace(crictl.must(t, "create", podID, ctr, pod))
	crictl.must(t, "start", id)

	if out := crictl.must(t, "exec", id, "cat", "/etc/hostname"); out != "box\n" {
		t.Errorf("crictl exec cat /etc/hostname: %q", out)
	}
	// crictl exits 1 on any error and says why: the exit code is in it.
	if _, errOut, code := crictl.run(t, "exec", id, "sh", "-c", "exit 3"); code != 1 || !strings.Contains(errOut, "command terminated with exit code 3") {
		t.Errorf("crictl exec sh -c 'exit 3': exit %d, stderr %q", code, errOut)
	}
	cmd := exec.Command(crictl.bin, append(append([]string{}, crictl.args...), "exec", "-it", id, "sh")...)
	cmd.Env = crictl.env
	term := startOnTerminal(t, cmd)
	term.shows(t, "/ # ")
	term.typeKeys(t, "echo $HOSTNAME > /tmp/seen; cat /tmp/seen\r")
	term.shows(t, "\r\nbox\r\n/ # ")
	term.typeKeys(t, "exit\r")
	term.exits(t)
	t.Logf("crictl exec -it screen:\n%q", term.screen())
	// crictl prints what ExecSync returned with fmt.Println: a newline more.
	if out := crictl.must(t, "exec", "--sync", id, "cat", "/tmp/seen"); strings.TrimRight(out, "\n") != "box" {
		t.Errorf("what the interactive shell wrote, read by ExecSync: %q", out)
	}
}

// terminal is a client run on a pseudo-terminal: what it shows, and how
// it ended.
type terminal struct {
	pty  *os.File
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	code int
}

func startOnTerminal(t *testing.T, cmd *exec.Cmd) *terminal {
	t.Helper()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatalf("start %s on a pty: %v", strings.Join(cmd.Args, " "), err)
	}
	term := &terminal{pty: f, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	copied := make(chan struct{})
	go func() { io.Copy(term.out, f); close(copied) }() // ends when the pty closes
	go func() {
		defer close(term.done)
		err := cmd.Wait()
		if exit, ok := err.(*exec.ExitError); ok {
			term.code = exit.ExitCode()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-term.done:
		default:
			cmd.Process.Kill()
			<-term.done
		}
		f.Close()
		<-copied
	})
	return term
}

func (term *terminal) typeKeys(t *testing.T, keys string) {
	t.Helper()
	if _, err := term.pty.Write([]byte(keys)); err != nil {
		t.Fatalf("type %q: %v", keys, err)
	}
}

func (term *terminal) shows(t *testing.T, want string) {
	t.Helper()
	testserver.EventuallyWithin(t, 20*time.Second, "the terminal shows "+strings.ReplaceAll(want, "\r\n", `\r\n`), func() (bool, string) {
		s := term.out.String()
		return strings.Contains(s, want), s
	})
}

func (term *terminal) screen() string { return term.out.String() }

// exits waits for the client to end and returns its exit code.
func (term *terminal) exits(t *testing.T) int {
	t.Helper()
	select {
	case <-term.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not exit; screen:\n%q", strings.Join(term.cmd.Args, " "), term.out.String())
	}
	return term.code
}

// startReading starts a client that runs until its context ends, and
// collects its stdout and stderr.
func startReading(t *testing.T, cmd *exec.Cmd) *syncBuffer {
	t.Helper()
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return out
}

// syncBuffer is a buffer written by one goroutine and read by another.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
