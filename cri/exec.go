package cri

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
)

// ExecSync runs a command in a running container and returns what it
// printed and its exit code: what an exec probe, a preStop exec hook and
// `crictl exec -s` use. The command is a new process beside the main one,
// in the same container: the same filesystem (it sees the files the main
// process wrote, as `cat /tmp/healthy` must), environment and programs.
// A command still running at the timeout (seconds; 0 is none) is killed
// and the call fails with DeadlineExceeded, as containerd's does.
func (s *Server) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	if len(req.GetCmd()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "cmd is required")
	}
	var stdout, stderr capped
	p, exited, err := s.newExec(req.GetContainerId(), execIO{stdout: &stdout, stderr: &stderr})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timedOut := make(chan struct{})
	if t := req.GetTimeout(); t > 0 {
		go func() {
			select {
			case <-ctx.Done():
			case <-s.clock.After(time.Duration(t) * time.Second):
				close(timedOut)
				cancel()
			}
		}()
	}
	code, err := runExec(ctx, p, req.GetCmd(), exited)
	select {
	case <-timedOut:
		return nil, status.Errorf(codes.DeadlineExceeded, "command %q timed out after %ds", quoteArgs(req.GetCmd()), req.GetTimeout())
	default:
	}
	if errors.Is(err, errContainerExited) {
		return nil, status.Errorf(codes.Unavailable, "container %s exited while the command ran", req.GetContainerId())
	}
	return &runtimeapi.ExecSyncResponse{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: int32(code)}, nil
}

// execIO are an exec's standard streams; nil ones are none.
type execIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// newExec makes the process of a command to run in the running container
// id, beside its main process: ExecSync's, and the streaming server's for
// `kubectl exec`. It returns the process, and the channel closed when the
// main process exits (which ends the command too).
func (s *Server) newExec(id string, stdio execIO) (*images.Process, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", id)
	if err != nil {
		return nil, nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING || c.proc == nil {
		return nil, nil, status.Errorf(codes.FailedPrecondition, "container %s is not running", c.id)
	}
	img := images.Lookup(c.image.ref)
	p := images.NewProcess(images.ProcessOptions{Clock: s.clock, FS: c.proc.sh.FS, Stdin: stdio.stdin, Stdout: stdio.stdout, Stderr: stdio.stderr,
		Env: environment(img, c.config, s.sandboxes[c.sandboxID]), Hostname: c.proc.sh.Hostname, Programs: img.Programs,
		Identity: c.proc.sh.Identity, Privileged: c.proc.sh.Privileged, NoNewPrivs: c.proc.sh.NoNewPrivs,
		Dial: c.proc.sh.Dial, Lookup: c.proc.sh.Lookup, CPU: c.resources.cpu}) // as the container's process, in its cgroup
	return p, c.proc.exited, nil
}

// errContainerExited is runExec's error when the container's main
// process exited while the command ran: the runtime kills what runs in a
// container that stops, as the kernel does a PID namespace's processes.
var errContainerExited = errors.New("the container exited while the command ran")

// runExec runs argv in p until it ends, ctx ends (images.ErrKilled) or
// the container exits (errContainerExited).
func runExec(ctx context.Context, p *images.Process, argv []string, exited <-chan struct{}) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	containerExited := make(chan struct{})
	go func() { // ends with the command, at the latest
		select {
		case <-ctx.Done():
		case <-exited:
			close(containerExited)
			cancel()
		}
	}()
	code, err := p.Exec(ctx, argv)
	if errors.Is(err, images.ErrKilled) {
		select {
		case <-containerExited:
			return code, errContainerExited
		default:
		}
	}
	return code, err
}

// maxExecOutput is CRI's cap on each of ExecSync's outputs: what a
// command prints past it is dropped (CVE-2022-1708).
const maxExecOutput = 16 << 20

// capped is a buffer that keeps the first maxExecOutput bytes.
type capped struct{ bytes.Buffer }

func (c *capped) Write(b []byte) (int, error) {
	if room := maxExecOutput - c.Len(); room > 0 {
		c.Buffer.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

var _ io.Writer = (*capped)(nil)
