package cri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/mkube/mkube/images"
	"github.com/mkube/mkube/network/podnetwork/podnet"
)

// `kubectl exec`, `attach` and `port-forward` are streams, which CRI's
// gRPC calls do not carry: Exec, Attach and PortForward only return a
// URL on the runtime's streaming server, valid for one connection, and
// the kubelet proxies the client's upgraded connection (SPDY, or
// WebSocket) to it:
//
//	kubectl ─▶ API server pods/web/exec ─▶ kubelet /exec/default/web/app
//	        ─▶ CRI Exec → http://127.0.0.1:41537/exec/Xk3f9a2b
//	        ─▶ the streaming server: sh runs in the container, its stdin,
//	           stdout and stderr are the client's, and its exit code is
//	           the stream's last word
//
// The streaming server is Kubernetes' own (k8s.io/cri-streaming, as
// containerd uses it); this file gives it the runtime's side: what runs
// the command, attaches to the main process (attach.go) and connects to
// a port in the pod (network/podnetwork's DialPod).

// streamIdleTimeout is how long a stream with no traffic stays open:
// containerd's stream_idle_timeout default, 4 h, so that a shell left
// open over lunch is still there.
const streamIdleTimeout = 4 * time.Hour

// ServeStreaming serves the streaming server on l until ctx ends. The
// URLs Exec, Attach and PortForward return name l's address, so it must
// be one the kubelet can reach: 127.0.0.1 for a runtime in the kubelet's
// process, the runtime's host name when they run apart (compose). An
// unspecified host (0.0.0.0) is replaced by this host's name.
func (s *Server) ServeStreaming(ctx context.Context, l net.Listener) error {
	addr := l.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	cfg := streaming.DefaultConfig
	cfg.Addr = l.Addr().String()
	cfg.BaseURL = &url.URL{Scheme: "http", Host: net.JoinHostPort(host, fmt.Sprint(addr.Port))}
	cfg.StreamIdleTimeout = streamIdleTimeout
	srv, err := streaming.NewServer(cfg, streamRuntime{s})
	if err != nil {
		return fmt.Errorf("streaming server: %w", err)
	}
	s.mu.Lock()
	s.streaming = srv
	s.mu.Unlock()
	s.log.Info("serving exec, attach and port-forward streams", "url", cfg.BaseURL.String())
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { hs.Close() }) // ends open streams too
	defer stop()
	if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("streaming server: %w", err)
	}
	return nil
}

// streamer is the streaming server, or a gRPC error if it is not serving.
func (s *Server) streamer() (streaming.Server, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streaming == nil {
		return nil, status.Error(codes.Unavailable, "the runtime's streaming server is not running")
	}
	return s.streaming, nil
}

// Exec returns where to stream a command in a running container, as
// `crictl exec -it` and the kubelet ask. A stopped container is refused
// with containerd's words.
func (s *Server) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	if len(req.GetCmd()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "cmd is required")
	}
	if err := s.checkRunning(req.GetContainerId()); err != nil {
		return nil, err
	}
	srv, err := s.streamer()
	if err != nil {
		return nil, err
	}
	return srv.GetExec(req)
}

// Attach returns where to stream the main process's stdio.
func (s *Server) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	if err := s.checkRunning(req.GetContainerId()); err != nil {
		return nil, err
	}
	srv, err := s.streamer()
	if err != nil {
		return nil, err
	}
	return srv.GetAttach(req)
}

// PortForward returns where to stream connections to the pod's ports.
func (s *Server) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	s.mu.Lock()
	_, sb, err := find(s.sandboxes, "sandbox", req.GetPodSandboxId())
	if err == nil && sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		err = status.Errorf(codes.FailedPrecondition, "sandbox container %q is not running", sb.id)
	}
	if err == nil {
		req.PodSandboxId = sb.id // a prefix, as crictl allows, made whole for the stream
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	srv, err := s.streamer()
	if err != nil {
		return nil, err
	}
	return srv.GetPortForward(req)
}

// checkRunning refuses a container that is not running, as containerd:
// "container is in CONTAINER_EXITED state".
func (s *Server) checkRunning(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", id)
	if err != nil {
		return err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return status.Errorf(codes.FailedPrecondition, "container is in %s state", c.state)
	}
	return nil
}

// streamRuntime is what the streaming server calls once the client has
// connected to a URL: streaming.Runtime.
type streamRuntime struct{ s *Server }

var _ streaming.Runtime = streamRuntime{}

// Exec runs cmd in the container with the client's streams, and returns
// once it exited: nil for 0, a utilexec.ExitError for another code, which
// the server sends as the stream's status and kubectl turns into its own
// exit code ("command terminated with exit code 3").
//
// With tty the client has a terminal (images.Terminal: echo, line
// editing, Ctrl-C) and one output stream. A program the container does
// not have fails before anything runs, with containerd's error, as
// exec(2) does.
func (r streamRuntime) Exec(ctx context.Context, id string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	s := r.s
	stdio := streamIO(in, out, errOut, tty, resize)
	p, exited, err := s.newExec(id, stdio)
	if err != nil {
		return err
	}
	if !p.LookPath(cmd[0]) {
		// runc's words: a name is looked up in $PATH, a path is stat'ed.
		why := "executable file not found in $PATH"
		if strings.Contains(cmd[0], "/") {
			why = fmt.Sprintf("stat %s: no such file or directory", cmd[0])
		}
		return fmt.Errorf("failed to exec in container: failed to start exec %q: OCI runtime exec failed: exec failed: "+
			"unable to start container process: exec: %q: %s: unknown", newID(), cmd[0], why)
	}
	s.log.Info("exec in container", "id", id, "argv", quoteArgs(cmd), "tty", tty, "stdin", in != nil)
	code, err := runExec(ctx, p, cmd, exited)
	switch {
	case errors.Is(err, errContainerExited):
		return err
	case err != nil: // the client went away: the command was killed
		s.log.Info("exec ended: the client went away", "id", id, "argv", quoteArgs(cmd))
		return nil
	case code != 0:
		s.log.Info("exec exited", "id", id, "argv", quoteArgs(cmd), "exitCode", code)
		return utilexec.CodeExitError{Err: fmt.Errorf("command %q exited with %d", quoteArgs(cmd), code), Code: code}
	}
	s.log.Info("exec exited", "id", id, "argv", quoteArgs(cmd), "exitCode", 0)
	return nil
}

// streamIO are a stream's stdio as the command sees them: with tty, a
// terminal between the client's input and its output, resized when the
// client's window is. Streams the client did not ask for are nil.
func streamIO(in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) execIO {
	var stdio execIO
	if in != nil {
		stdio.stdin = in
	}
	if out != nil {
		stdio.stdout = out
	}
	if errOut != nil {
		stdio.stderr = errOut
	}
	if tty && stdio.stdout != nil {
		keys := stdio.stdin
		if keys == nil {
			keys = eofReader{}
		}
		term := images.NewTerminal(keys, stdio.stdout)
		stdio.stdout, stdio.stderr = term.Output(), term.Output()
		if in != nil {
			stdio.stdin = term
		}
		go resizeTerminal(term, resize)
	} else {
		go resizeTerminal(nil, resize)
	}
	return stdio
}

// resizeTerminal applies the client's window sizes until it stops
// sending them (the stream's end closes resize).
func resizeTerminal(term *images.Terminal, resize <-chan remotecommand.TerminalSize) {
	if resize == nil {
		return
	}
	for size := range resize {
		if term != nil {
			term.Resize(size.Width, size.Height)
		}
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// Attach connects the client to the main process's stdio until the
// process exits or the client goes (attach.go).
func (r streamRuntime) Attach(ctx context.Context, id string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	s := r.s
	s.mu.Lock()
	_, c, err := find(s.containers, "container", id)
	if err == nil && (c.state != runtimeapi.ContainerState_CONTAINER_RUNNING || c.proc == nil) {
		err = fmt.Errorf("container is in %s state", c.state)
	}
	var p *process
	if err == nil {
		p = c.proc
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.log.Info("attached to container", "id", id, "stdin", in != nil, "tty", tty)
	p.attach.attach(ctx, in, out, errOut, resize, p.exited)
	s.log.Info("detached from container", "id", id)
	return nil
}

// PortForward connects the client's stream to port in the sandbox, as
// containerd connects to localhost:port inside the pod's network
// namespace; the container's process that listens there answers (DialPodFrom).
func (r streamRuntime) PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error {
	s := r.s
	s.mu.Lock()
	_, sb, err := find(s.sandboxes, "sandbox", sandboxID)
	var ip string
	if err == nil {
		ip = sb.ipString()
	}
	s.mu.Unlock()
	switch {
	case err != nil:
		return err
	case ip == "":
		return fmt.Errorf("sandbox %s has no IP: port-forward to a hostNetwork pod is not simulated", sandboxID)
	}
	// From the pod's own loopback, as containerd connects: nginx logs
	// a port-forwarded request as from 127.0.0.1.
	conn, err := s.net.DialPodFrom(ctx, netip.MustParseAddr("127.0.0.1"), ip, port)
	if err != nil {
		return fmt.Errorf("failed to connect to localhost:%d inside the network namespace of sandbox %s, IP: %s, error: dial tcp4 127.0.0.1:%d: %s",
			port, sandboxID, ip, port, status.Convert(err).Message())
	}
	defer conn.Close()
	s.log.Info("port-forward connected", "sandbox", sandboxID, "port", port)
	// The client's bytes to the pod until it stops sending (a FIN, passed
	// on); the pod's to the client until the pod closes. Returning closes
	// the stream, so the goroutine ends with the connection.
	go func() {
		io.Copy(conn, stream)
		if cw, ok := conn.(podnet.CloseWriter); ok {
			cw.CloseWrite()
		}
	}()
	io.Copy(stream, conn)
	return nil
}
