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

	"github.com/mkube/mkube/cri/catalog"
	"github.com/mkube/mkube/cri/shell"
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
	s.mu.Lock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING || c.proc == nil {
		s.mu.Unlock()
		return nil, status.Errorf(codes.FailedPrecondition, "container %s is not running", c.id)
	}
	img := catalog.Lookup(c.image.ref)
	var stdout, stderr capped
	p := shell.New(shell.Options{Clock: s.clock, FS: c.proc.sh.FS, Stdout: &stdout, Stderr: &stderr,
		Env: environment(img, c.config, s.sandboxes[c.sandboxID]), Hostname: c.proc.sh.Hostname, Programs: img.Programs})
	exited := c.proc.exited
	s.mu.Unlock()

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
	go func() { // the container's exit ends what runs in it
		select {
		case <-ctx.Done():
		case <-exited:
			cancel()
		}
	}()
	code, err := p.Exec(ctx, req.GetCmd())
	select {
	case <-timedOut:
		return nil, status.Errorf(codes.DeadlineExceeded, "command %q timed out after %ds", quoteArgs(req.GetCmd()), req.GetTimeout())
	default:
	}
	if errors.Is(err, shell.ErrKilled) && ctx.Err() != nil {
		return nil, status.Errorf(codes.Unavailable, "container %s exited while the command ran", c.id)
	}
	return &runtimeapi.ExecSyncResponse{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: int32(code)}, nil
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
