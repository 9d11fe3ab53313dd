package cri

import (
	"context"
	"io"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/mkube/mkube/images"
)

// `kubectl attach` (and `kubectl run -it`) connects to the main process
// of a container, not to a new one: what the process prints goes to its
// log and to every attached client, and, if the container has stdin:
// true, what a client types is the process's stdin. With tty: true the
// container has a terminal from its start (a shell prompts on it), and
// what goes to the log is what the terminal shows, as with containerd.
//
// stdinOnce (kubectl run -i sets it) closes the process's stdin when the
// first attached client's stdin ends: the shell reads end-of-file and
// exits, and so does the container. Without it, stdin stays open for the
// next attach.

// attachment is a main process's stdio.
type attachment struct {
	stdout, stderr *fanout
	term           *images.Terminal // tty: true; nil otherwise
	stdinOnce      bool
	stdinR         *io.PipeReader // the process's end of stdin; nil without stdin: true
	stdinW         *io.PipeWriter // the attached clients' end

	// What the process is given: stdin (nil if none), stdout, stderr.
	procIn           io.Reader
	procOut, procErr io.Writer
}

// newAttachment makes the stdio of a container started with cfg, whose
// log is log.
func newAttachment(cfg *runtimeapi.ContainerConfig, log *logWriter) *attachment {
	a := &attachment{stdout: &fanout{log: log.stream("stdout")}, stderr: &fanout{log: log.stream("stderr")},
		stdinOnce: cfg.GetStdinOnce()}
	a.procOut, a.procErr = a.stdout, a.stderr
	var keys io.Reader = eofReader{}
	if cfg.GetStdin() {
		a.stdinR, a.stdinW = io.Pipe()
		keys, a.procIn = a.stdinR, a.stdinR
	}
	if cfg.GetTty() {
		a.term = images.NewTerminal(keys, a.stdout)
		a.procOut, a.procErr = a.term.Output(), a.term.Output()
		if a.procIn != nil {
			a.procIn = a.term
		}
	}
	return a
}

// closeWhen closes stdin once exited is closed: a client still typing
// is told the pipe is closed, and the terminal's reader ends.
func (a *attachment) closeWhen(exited <-chan struct{}) {
	if a.stdinR == nil {
		return
	}
	go func() { // owner: the process; ends when it exits
		<-exited
		a.stdinR.Close()
	}()
}

// attach connects one client until ctx ends (the client went) or the
// process exits. in, out and errOut are nil for the streams the client
// did not ask for; with a tty there is no stderr of its own.
func (a *attachment) attach(ctx context.Context, in io.Reader, out, errOut io.Writer, resize <-chan remotecommand.TerminalSize, exited <-chan struct{}) {
	if out != nil {
		a.stdout.add(out)
		defer a.stdout.remove(out)
	}
	if errOut != nil && a.term == nil {
		a.stderr.add(errOut)
		defer a.stderr.remove(errOut)
	}
	go resizeTerminal(a.term, resize)
	if in != nil && a.stdinW != nil {
		go func() { // ends when the client's stdin does, or the process exits
			io.Copy(a.stdinW, in)
			if a.stdinOnce {
				a.stdinW.Close()
			}
		}()
	}
	select {
	case <-ctx.Done():
	case <-exited:
	}
}

// fanout is one output stream of the main process: its log, and the
// attached clients. A client that fails a write is dropped.
type fanout struct {
	log io.Writer

	mu      sync.Mutex
	clients []io.Writer
}

func (f *fanout) Write(b []byte) (int, error) {
	f.log.Write(b)
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.clients[:0]
	for _, c := range f.clients {
		if _, err := c.Write(b); err == nil {
			kept = append(kept, c)
		}
	}
	f.clients = kept
	return len(b), nil
}

func (f *fanout) add(w io.Writer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clients = append(f.clients, w)
}

func (f *fanout) remove(w io.Writer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range f.clients {
		if c == w {
			f.clients = append(f.clients[:i], f.clients[i+1:]...)
			return
		}
	}
}
