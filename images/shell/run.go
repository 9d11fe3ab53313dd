package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path"
	"slices"
	"strings"
	"sync"

	"k8s.io/utils/clock"
)

// Process is one run of the shell: a container's main process.
type Process struct {
	Clock    clock.Clock
	FS       *FS
	Stdin    io.Reader // nil: none (a container without stdin: true)
	Stdout   io.Writer
	Stderr   io.Writer
	Hostname string
	Identity Identity // who it runs as (id.go)
	// Privileged: the process has every capability (securityContext
	// privileged), as `ip link add` needs (kernel.go). NoNewPrivs: it may
	// not gain privileges, as by a setuid binary (allowPrivilegeEscalation
	// false).
	Privileged, NoNewPrivs bool
	// Dial connects to "host:port" over network, "tcp" or "udp" (a
	// connected UDP socket), from the container's network namespace
	// (curl, wget, nc: net.go), as net.Dialer's DialContext does; nil:
	// the container has no network, and every connection fails.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Lookup asks the nameserver of the container's /etc/resolv.conf
	// (dns.go); nil: no nameserver answers. Its error is no answer at
	// all, a timeout.
	Lookup func(ctx context.Context, q DNSQuestion) (DNSReply, error)

	env      []string // NAME=value, in the order the container was given them
	status   int      // $?
	subs     int      // command substitutions run, for runSimple's status
	steps    int      // commands run since time last passed: see pace
	programs map[string]Program
	arg0     string        // argv[0] of the program running now (Arg0)
	in       input         // how Stdin is read (interactive.go)
	term     chan struct{} // closed by Terminate
	termOnce sync.Once
	res      resources
	cpu      *CPU   // its cgroup's CPU accounting (cpu.go)
	spinning func() // releases the core a busy loop holds (pace); nil while it blocks
}

// Options start a Process.
type Options struct {
	Clock    clock.Clock // nil: the real clock
	FS       *FS         // nil: an empty filesystem
	Stdin    io.Reader   // nil: none, so `sh` and `cat` read end-of-file at once
	Stdout   io.Writer   // nil: discarded
	Stderr   io.Writer   // nil: discarded
	Env      []string    // NAME=value
	Hostname string
	// Programs are what the image has besides the shell's own (nginx,
	// redis-server...), by name.
	Programs map[string]Program
	// MemoryLimit is the container's limits.memory in bytes (0: none):
	// using more is an OOM kill.
	MemoryLimit int64
	Identity    Identity // zero: root
	Privileged  bool     // see Process
	NoNewPrivs  bool
	Dial        func(ctx context.Context, network, address string) (net.Conn, error) // see Process
	Lookup      func(ctx context.Context, q DNSQuestion) (DNSReply, error)           // see Process
	// CPU is the container's cgroup's CPU accounting, shared by its main
	// process and what is exec'd beside it; nil: one of its own.
	CPU *CPU
}

// New makes a process that has not run yet.
func New(o Options) *Process {
	p := &Process{Clock: o.Clock, FS: o.FS, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Hostname: o.Hostname, Identity: o.Identity,
		Privileged: o.Privileged, NoNewPrivs: o.NoNewPrivs, Dial: o.Dial, Lookup: o.Lookup,
		env: append([]string{}, o.Env...), programs: o.Programs, term: make(chan struct{}),
		res: resources{limit: o.MemoryLimit}, cpu: o.CPU}
	if p.Clock == nil {
		p.Clock = clock.RealClock{}
	}
	if p.cpu == nil {
		p.cpu = NewCPU(p.Clock)
	}
	if p.FS == nil {
		p.FS = NewFS()
	}
	if p.Stdout == nil {
		p.Stdout = io.Discard
	}
	if p.Stderr == nil {
		p.Stderr = io.Discard
	}
	return p
}

// ErrKilled is what Exec returns when ctx ends first: the process was
// killed (SIGKILL), and its exit code is 137. (ErrOOMKilled is the other
// way a process is killed.)
var ErrKilled = errors.New("killed")

// exitError unwinds the interpreter on `exit N`.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Exec runs argv as the container's process (argv[0] is the program:
// "sh", "/bin/echo", ...) and returns its exit code, and ErrKilled or
// ErrOOMKilled if it did not end on its own.
func (p *Process) Exec(ctx context.Context, argv []string) (int, error) {
	if len(argv) == 0 {
		return 0, nil
	}
	defer p.block() // an ended process holds no core
	err := p.call(ctx, argv, p.Stdout)
	var exit exitError
	switch {
	case errors.As(err, &exit):
		return exit.code, nil
	case errors.Is(err, ErrOOMKilled):
		return 137, ErrOOMKilled
	case err != nil:
		return 137, ErrKilled
	}
	return p.status, nil
}

// Script runs a shell script, as `sh -c SCRIPT` does.
func (p *Process) Script(ctx context.Context, script string) (int, error) {
	return p.Exec(ctx, []string{"sh", "-c", script})
}

// runScript parses and runs a script; a syntax error is status 2, as in sh.
func (p *Process) runScript(ctx context.Context, script string, out io.Writer) error {
	l, err := parse(script)
	if err != nil {
		fmt.Fprintf(p.Stderr, "sh: %v\n", err)
		p.status = 2
		return nil
	}
	return p.run(ctx, l, out)
}

func (p *Process) run(ctx context.Context, n node, out io.Writer) error {
	if err := p.pace(ctx); err != nil {
		return err
	}
	switch n := n.(type) {
	case *list:
		for _, item := range n.items {
			if err := p.run(ctx, item, out); err != nil {
				return err
			}
		}
	case *andOr:
		if err := p.run(ctx, n.first, out); err != nil {
			return err
		}
		for _, next := range n.rest {
			if (next.op == "&&") == (p.status == 0) {
				if err := p.run(ctx, next.node, out); err != nil {
					return err
				}
			}
		}
	case *pipeline:
		return p.runPipeline(ctx, n, out)
	case *whileLoop:
		for {
			if err := p.run(ctx, n.cond, out); err != nil {
				return err
			}
			if p.status != 0 {
				p.status = 0
				return nil
			}
			if err := p.run(ctx, n.body, out); err != nil {
				return err
			}
		}
	case *forLoop:
		var values []string
		for _, w := range n.words {
			fields, err := p.expandWord(ctx, w)
			if err != nil {
				return err
			}
			values = append(values, fields...)
		}
		p.status = 0
		for _, v := range values {
			p.setVar(n.name, v)
			if err := p.run(ctx, n.body, out); err != nil {
				return err
			}
		}
	case *ifClause:
		for i, cond := range n.conds {
			if err := p.run(ctx, cond, out); err != nil {
				return err
			}
			if p.status == 0 {
				return p.run(ctx, n.thens[i], out)
			}
		}
		p.status = 0
		if n.els != nil {
			return p.run(ctx, n.els, out)
		}
	case *simple:
		return p.runSimple(ctx, n, out)
	}
	return nil
}

// runPipeline runs `a | b | c`: each command's standard output is the
// next one's standard input, and the pipeline's status is the last
// command's. The commands run one after the other, each on what the one
// before it printed in all, rather than side by side as processes joined
// by pipes: the same output for the pipelines scripts use (`wc -l f |
// awk '{print $1}'`, `cat f | grep x`); an endless producer (`yes |
// head`) writes a pipe's worth and ends (hogs.go).
func (p *Process) runPipeline(ctx context.Context, pl *pipeline, out io.Writer) error {
	buf := &bytes.Buffer{}
	if err := p.run(ctx, pl.commands[0], buf); err != nil { // on the shell's own input
		return err
	}
	savedIn, savedInput := p.Stdin, p.in
	defer func() { p.Stdin, p.in = savedIn, savedInput }()
	for i, cmd := range pl.commands[1:] {
		p.Stdin, p.in = bytes.NewReader(buf.Bytes()), input{}
		if i == len(pl.commands)-2 {
			return p.run(ctx, cmd, out)
		}
		buf = &bytes.Buffer{}
		if err := p.run(ctx, cmd, buf); err != nil {
			return err
		}
	}
	return nil
}

// runSimple expands a simple command's words, then its assignments,
// then its redirections, in that order (POSIX 2.9.1), and runs it.
func (p *Process) runSimple(ctx context.Context, s *simple, out io.Writer) error {
	subs := p.subs
	var argv []string
	for _, w := range s.words {
		fields, err := p.expandWord(ctx, w)
		if err != nil {
			return err
		}
		argv = append(argv, fields...)
	}
	if len(argv) == 0 { // NAME=value alone sets a shell variable
		if err := p.assign(ctx, s.assigns); err != nil {
			return err
		}
		// Without a command its status is the last command
		// substitution's (x=$(false) is 1), else 0.
		if p.subs == subs {
			p.status = 0
		}
		return nil
	}
	saved := p.env
	if len(s.assigns) > 0 { // NAME=value cmd: for that command only
		p.env = append([]string{}, p.env...)
		defer func() { p.env = saved }()
		if err := p.assign(ctx, s.assigns); err != nil {
			return err
		}
	}
	if len(s.redirects) > 0 {
		// Programs print errors on p.Stderr: it is swapped for the command.
		savedErr := p.Stderr
		defer func() { p.Stderr = savedErr }()
		streams := map[int]io.Writer{1: out, 2: p.Stderr}
		for _, r := range s.redirects {
			if r.dup != 0 {
				streams[r.fd] = streams[r.dup]
				continue
			}
			target, err := p.expandString(ctx, r.target)
			if err != nil {
				return err
			}
			if target == "/dev/null" {
				streams[r.fd] = io.Discard
				continue
			}
			f, err := p.FS.openWrite(target, r.append)
			if err != nil {
				// ash names itself as it was called: "/bin/sh: can't create ..."
				fmt.Fprintf(p.Stderr, "%s: can't create %s: %v\n", p.shellName(), target, err)
				p.status = 1
				return nil
			}
			streams[r.fd] = f
		}
		out, p.Stderr = streams[1], streams[2]
	}
	return p.call(ctx, argv, out)
}

// assign sets variables; a value is expanded but not split into words.
func (p *Process) assign(ctx context.Context, assigns []assignment) error {
	for _, a := range assigns {
		v, err := p.expandString(ctx, a.value)
		if err != nil {
			return err
		}
		p.setVar(a.name, v)
	}
	return nil
}

// Terminate delivers SIGTERM. Only a program that handles it notices
// (Terminated): a server shuts down and exits. A shell running as PID 1
// has no handler, so `sleep 600` goes on until the runtime kills it when
// the grace period ends, as in a real container.
func (p *Process) Terminate() { p.termOnce.Do(func() { close(p.term) }) }

// Terminated is closed once SIGTERM has been delivered.
func (p *Process) Terminated() <-chan struct{} { return p.term }

// call runs one program; its exit status becomes $?.
func (p *Process) call(ctx context.Context, argv []string, out io.Writer) error {
	name := path.Base(argv[0])
	prog, ok := p.programs[name]
	if !ok {
		prog, ok = programs[name]
	}
	if !ok {
		fmt.Fprintf(p.Stderr, "sh: %s: not found\n", argv[0])
		p.status = 127
		return nil
	}
	saved := p.arg0
	p.arg0 = argv[0]
	status, err := prog(ctx, p, argv[1:], out)
	p.arg0 = saved
	p.status = status
	return err
}

// shellName is how the shell running a script names itself in its
// errors: the name it was called by ("sh", "/bin/sh").
func (p *Process) shellName() string {
	if p.arg0 == "" {
		return "sh"
	}
	return p.arg0
}

// Arg0 is the name the running program was called by, as given
// ("/agnhost-2", "sh"): its os.Args[0], which a Program does not get
// among its arguments.
func (p *Process) Arg0() string { return p.arg0 }

// Environ is the process's environment, NAME=value, as os.Environ.
func (p *Process) Environ() []string { return slices.Clone(p.env) }

// Getenv is a variable's value, "" if unset.
func (p *Process) Getenv(name string) string {
	for i := len(p.env) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(p.env[i], "="); k == name {
			return v
		}
	}
	if name == "HOSTNAME" {
		return p.Hostname
	}
	return ""
}

func (p *Process) setVar(name, value string) {
	for i, kv := range p.env {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			p.env[i] = name + "=" + value
			return
		}
	}
	p.env = append(p.env, name+"="+value)
}
