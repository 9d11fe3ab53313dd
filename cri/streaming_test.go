package cri

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"
)

// The streaming server as the kubelet (and crictl) reach it: a CRI call
// for a URL, then client-go's SPDY client on that URL, as the kubelet's
// proxy would carry kubectl's.

// startStreaming serves h's streaming server on loopback until the test ends.
func startStreaming(t *testing.T, h *harness) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.srv.ServeStreaming(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeStreaming: %v", err)
		}
	})
	for !h.srv.streamerReady() {
		select {
		case err := <-served:
			t.Fatalf("ServeStreaming: %v", err)
		case <-time.After(time.Millisecond): // polling a condition: the server sets itself up
		}
	}
}

func (s *Server) streamerReady() bool {
	_, err := s.streamer()
	return err == nil
}

// stream connects to a streaming URL as a SPDY client.
func stream(t *testing.T, rawURL string, opts remotecommand.StreamOptions) error {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	exec, err := remotecommand.NewSPDYExecutor(&rest.Config{Host: "http://" + u.Host}, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return exec.StreamWithContext(ctx, opts)
}

func (h *harness) execURL(t *testing.T, req *runtimeapi.ExecRequest) string {
	t.Helper()
	resp, err := h.rt.Exec(h.ctx, req)
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	return resp.Url
}

func TestStreamingExec(t *testing.T) {
	h := newHarness(t, Options{})
	startStreaming(t, h)
	_, id := h.runContainer(t, "web", "nginx")

	t.Run("a command's output, stderr and exit code", func(t *testing.T) {
		var out, errOut bytes.Buffer
		err := stream(t, h.execURL(t, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"sh", "-c", "echo $HOSTNAME; echo oops >&2; exit 3"}, Stdout: true, Stderr: true}),
			remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
		var exit utilexec.ExitError
		if !errors.As(err, &exit) || exit.ExitStatus() != 3 {
			t.Errorf("err %v, want exit code 3", err)
		}
		if out.String() != "web\n" || errOut.String() != "oops\n" {
			t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
		}
	})
	t.Run("stdin, and a file the command writes, which the next one reads", func(t *testing.T) {
		err := stream(t, h.execURL(t, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"sh", "-c", "cat > /tmp/in"}, Stdin: true, Stdout: true}),
			remotecommand.StreamOptions{Stdin: strings.NewReader("piped\n"), Stdout: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.rt.ExecSync(h.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"cat", "/tmp/in"}})
		if err != nil || string(resp.Stdout) != "piped\n" {
			t.Errorf("ExecSync cat /tmp/in: %q, %v", resp.GetStdout(), err)
		}
	})
	t.Run("a tty: echo, \\r\\n and a shell that keeps its variables", func(t *testing.T) {
		keys, typed := io.Pipe()
		screen := &lockedBuffer{}
		done := make(chan error, 1)
		url := h.execURL(t, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"sh"}, Stdin: true, Stdout: true, Tty: true})
		go func() { done <- stream(t, url, remotecommand.StreamOptions{Stdin: keys, Stdout: screen, Tty: true}) }()
		// Type once the shell prompts, as a person would: keys typed
		// before would be echoed before the prompt.
		waitFor(t, "the first prompt", func() bool { return strings.HasPrefix(screen.String(), "# ") })
		fmt.Fprint(typed, "X=42\r")
		waitFor(t, "the prompt after X=42", func() bool { return strings.Contains(screen.String(), "# X=42\r\n# ") })
		fmt.Fprint(typed, "echo $X\r")
		waitFor(t, "42", func() bool { return strings.Contains(screen.String(), "echo $X\r\n42\r\n# ") })
		fmt.Fprint(typed, "exit 4\r")
		err := <-done
		var exit utilexec.ExitError
		if !errors.As(err, &exit) || exit.ExitStatus() != 4 {
			t.Errorf("err %v, want exit code 4", err)
		}
		if s, want := screen.String(), "# X=42\r\n# echo $X\r\n42\r\n# exit 4\r\n"; s != want {
			t.Errorf("screen %q, want %q: dash's prompt, the typed lines echoed, 42 printed", s, want)
		}
	})
	t.Run("a program the image does not have fails as containerd's exec does", func(t *testing.T) {
		err := stream(t, h.execURL(t, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"nosuch"}, Stdout: true}),
			remotecommand.StreamOptions{Stdout: io.Discard})
		if err == nil || !strings.Contains(err.Error(), `exec: "nosuch": executable file not found in $PATH: unknown`) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("a stopped container is refused with containerd's words", func(t *testing.T) {
		if _, err := h.rt.StopContainer(h.ctx, &runtimeapi.StopContainerRequest{ContainerId: id}); err != nil {
			t.Fatal(err)
		}
		_, err := h.rt.Exec(h.ctx, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"ls"}, Stdout: true})
		if err == nil || !strings.Contains(err.Error(), "container is in CONTAINER_EXITED state") {
			t.Errorf("err %v", err)
		}
	})
}

func TestAttachToAContainerWithStdin(t *testing.T) {
	h := newHarness(t, Options{})
	startStreaming(t, h)
	podID := h.runPod(t, "shell")
	h.pull(t, "busybox")
	cfg := containerConfig("shell", "busybox")
	cfg.Command, cfg.Stdin, cfg.StdinOnce = []string{"sh"}, true, true
	id := h.create(t, podID, cfg)
	h.start(t, id)

	resp, err := h.rt.Attach(h.ctx, &runtimeapi.AttachRequest{ContainerId: id, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := stream(t, resp.Url, remotecommand.StreamOptions{Stdin: strings.NewReader("echo attached to $HOSTNAME\nexit 6\n"), Stdout: &out, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "attached to shell\n" {
		t.Errorf("stdout %q", out.String())
	}
	// The main process read its commands from the attached stdin: the
	// container exited with what it said.
	waitFor(t, "the container to exit", func() bool {
		return h.containerStatus(t, id).State == runtimeapi.ContainerState_CONTAINER_EXITED
	})
	if code := h.containerStatus(t, id).ExitCode; code != 6 {
		t.Errorf("exit code %d, want 6", code)
	}
}

func TestPortForwardReachesTheContainersServer(t *testing.T) {
	h := newHarness(t, Options{})
	startStreaming(t, h)
	podID, id := h.runContainer(t, "web", "nginx")
	// nginx's entrypoint configures before it listens: until then a
	// connection would be refused, as on a real node.
	waitFor(t, "nginx to listen on 80", func() bool {
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		c := h.srv.containers[id]
		return c != nil && c.proc != nil && c.proc.sh.Listening(80)
	})
	resp, err := h.rt.PortForward(h.ctx, &runtimeapi.PortForwardRequest{PodSandboxId: podID})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(resp.Url)
	transport, upgrader, err := spdy.RoundTripperFor(&rest.Config{Host: "http://" + u.Host})
	if err != nil {
		t.Fatal(err)
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", u)
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:80"}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	go fw.ForwardPorts()
	<-ready
	ports, err := fw.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	got, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", ports[0].Local))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if got.StatusCode != 200 || !strings.Contains(string(body), "Welcome to nginx!") {
		t.Errorf("GET / through the forwarded port: %s\n%s", got.Status, body)
	}
}

// lockedBuffer is a buffer written by the stream and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
