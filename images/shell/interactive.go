package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A shell given no script (`sh`, `kubectl exec -it web -- sh`) reads its
// commands from its standard input, a line at a time, and runs each in
// the same process, so that variables set on one line are there on the
// next; `exit N` ends it with N, end-of-file with the last status. On a
// terminal it is interactive, as sh is when isatty(0): it prompts (PS1,
// and "> " while a command is unfinished, as after `if true; then`), and
// Ctrl-C interrupts the command running (status 130) or drops the line
// typed so far. Without stdin (a container without stdin: true) it reads
// end-of-file at once and exits 0: why a bare busybox Pod completes.

// readCommands is sh's loop over its standard input; name is the shell
// the user asked for ("sh" or "bash"), whose prompt it shows.
func (p *Process) readCommands(ctx context.Context, name string, out io.Writer) (int, error) {
	if p.Stdin == nil {
		return 0, nil
	}
	term, _ := p.Stdin.(*Terminal)
	var script strings.Builder
	for {
		if term != nil {
			prompt := p.prompt(name)
			if script.Len() > 0 {
				prompt = "> " // PS2
			}
			io.WriteString(p.Stderr, prompt)
		}
		line, err := p.readLine(ctx)
		switch {
		case errors.Is(err, ErrInterrupt): // Ctrl-C at the prompt
			script.Reset()
			p.status = 130
			io.WriteString(p.Stderr, "\n")
			continue
		case ctx.Err() != nil:
			return 137, ctx.Err() // killed while it waited for input
		case err != nil && line == "":
			if term != nil { // Ctrl-D: the shell leaves the cursor on a line of its own
				if name == "bash" {
					io.WriteString(p.Stderr, "exit")
				}
				io.WriteString(p.Stderr, "\n")
			}
			return p.status, nil
		}
		script.WriteString(line)
		list, perr := parse(script.String())
		if perr != nil && unfinished(perr) && err == nil {
			continue // read on: the command goes on on the next line
		}
		script.Reset()
		if perr != nil {
			fmt.Fprintf(p.Stderr, "sh: %v\n", perr)
			p.status = 2
			continue
		}
		if err := p.runForeground(ctx, term, list, out); err != nil {
			var exit exitError
			if errors.As(err, &exit) && term != nil && name == "bash" {
				io.WriteString(p.Stderr, "exit\n") // bash says so when an interactive shell exits
			}
			return p.status, err
		}
	}
}

// unfinished says whether a parse failed only because the script stops
// before its end: an open quote, or an `if` without its `fi`. (The
// parser's messages are sh's, so that is how they read.)
func unfinished(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "unexpected end of file") || strings.Contains(msg, "unterminated quoted string")
}

// runForeground runs one command line; on a terminal Ctrl-C interrupts
// it (SIGINT: status 130, and the shell goes on), as the kernel sends
// SIGINT to the foreground process group.
func (p *Process) runForeground(ctx context.Context, term *Terminal, l *list, out io.Writer) error {
	if term == nil {
		return p.run(ctx, l, out)
	}
	cmdCtx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	term.foreground(interrupt)
	defer term.foreground(nil)
	err := p.run(cmdCtx, l, out)
	if err != nil && cmdCtx.Err() != nil && ctx.Err() == nil {
		p.status = 130
		io.WriteString(p.Stderr, "\n")
		return nil
	}
	return err
}

// prompt is PS1 as the image's shell shows it to root: busybox's ash
// (busybox, Alpine) "/ # ", Debian's dash "# ", and bash, with Debian's
// /etc/bash.bashrc, "root@<hostname>:/# ". The working directory is
// always /.
func (p *Process) prompt(name string) string {
	switch {
	case name == "bash":
		return "root@" + p.Hostname + ":/# "
	case p.busybox():
		return "/ # "
	}
	return "# "
}

// busybox says whether the image's programs are busybox's, as in the
// busybox and Alpine images: their sh is ash, their tar busybox's.
func (p *Process) busybox() bool {
	exists, _ := p.FS.Stat("/bin/busybox")
	return exists
}

// bash is sh under its other name: the same interpreter, with bash's
// prompt when it reads a terminal.
func bash(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-c" {
		return p.subshell(func() (int, error) { return p.readCommands(ctx, "bash", out) })
	}
	return sh(ctx, p, args, out)
}

// subshell runs fn with variables of its own, and its `exit` ends only
// itself, as a shell started by a shell.
func (p *Process) subshell(fn func() (int, error)) (int, error) {
	saved := p.env
	p.env = append([]string{}, p.env...)
	defer func() { p.env = saved }()
	code, err := fn()
	var exit exitError
	if errors.As(err, &exit) {
		return exit.code, nil
	}
	return code, err
}

// input is how a process reads its Stdin: so that a kill ends a read
// that waits (nothing typed yet, a client that sends nothing), each read
// of Stdin runs in a goroutine, and the process waits for it or for its
// context. A read that was waiting when the command was interrupted is
// not lost: what it reads is what the process reads next. The process is
// one goroutine, so input needs no lock.
type input struct {
	pending chan readResult // the read of Stdin in flight, nil if none
	rest    []byte          // read from Stdin, not yet by the process
	err     error           // how Stdin ended, once it has
}

type readResult struct {
	data []byte
	err  error
}

// read reads Stdin into b, as read(2) on fd 0: end-of-file if there is
// no Stdin, ctx's error if the process is killed first.
func (p *Process) read(ctx context.Context, b []byte) (int, error) {
	in := &p.in
	if p.Stdin == nil {
		return 0, io.EOF
	}
	if len(in.rest) == 0 && in.err == nil {
		if in.pending == nil {
			pending := make(chan readResult, 1) // the goroutine never blocks on it
			in.pending = pending
			stdin, size := p.Stdin, max(len(b), 4096)
			go func() { // owner: this read; ends when Stdin answers
				buf := make([]byte, size)
				n, err := stdin.Read(buf)
				pending <- readResult{data: buf[:n], err: err}
			}()
		}
		select {
		case r := <-in.pending:
			in.pending = nil
			in.rest = r.data
			if errors.Is(r.err, ErrInterrupt) {
				return 0, ErrInterrupt // only this read: a terminal goes on
			}
			in.err = r.err
			if r.err == io.EOF && p.isTerminal() {
				in.err = nil // Ctrl-D: end-of-file for this read only
				if len(r.data) == 0 {
					return 0, io.EOF
				}
			}
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if len(in.rest) > 0 {
		n := copy(b, in.rest)
		in.rest = in.rest[n:]
		return n, nil
	}
	return 0, in.err
}

func (p *Process) isTerminal() bool {
	_, ok := p.Stdin.(*Terminal)
	return ok
}

// readLine reads up to and with the next newline, or what is left at
// end-of-file (with the error).
func (p *Process) readLine(ctx context.Context) (string, error) {
	var line []byte
	buf := make([]byte, 4096)
	for {
		n, err := p.read(ctx, buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			line = append(line, buf[:i+1]...)
			p.in.rest = append(buf[i+1:n:n], p.in.rest...) // for the next read
			return string(line), nil
		}
		line = append(line, buf[:n]...)
		if err != nil {
			return string(line), err
		}
	}
}

// stdin is the process's Stdin as an io.Reader for programs (cat, tar),
// interrupted by ctx.
func (p *Process) stdin(ctx context.Context) io.Reader {
	return readerFunc(func(b []byte) (int, error) { return p.read(ctx, b) })
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }
