package shell

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"strings"
)

// The programs people run to keep a CPU busy: `yes > /dev/null`,
// `dd if=/dev/zero of=/dev/null`, `md5sum /dev/urandom`, `cat
// /dev/urandom > /dev/null`. Each reads or writes without end, so each
// keeps one core busy until it is killed. Here they do it in the
// accounting only (Process.Spin): the container's cgroup is charged a
// core of the clock's time while the host does nothing.

var (
	md5sum    = checksum("md5sum", md5.New)
	sha256sum = checksum("sha256sum", sha256.New)
)

// endless reports whether name is a device that never runs dry.
func endless(name string) bool {
	switch name {
	case "/dev/zero", "/dev/urandom", "/dev/random":
		return true
	}
	return false
}

// pipeSize is what a pipe holds before its writer blocks (Linux's
// 64 KiB). The shell runs a pipeline's stages one after the other, so an
// endless writer into a pipe (`yes | head -n 3`) writes that much and
// ends, as the real one ends of SIGPIPE once its reader has had enough.
const pipeSize = 64 << 10

// intoPipe reports whether out is a pipeline's pipe (run.go's
// runPipeline) or a command substitution's.
func intoPipe(out io.Writer) bool {
	_, ok := out.(*bytes.Buffer)
	return ok
}

// yes prints its arguments ("y") on a line, forever. Into /dev/null it
// only spins; into a pipe it fills it; into a log or file it prints,
// paced as a shell loop is.
func yes(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	if out == io.Discard {
		return 137, p.Spin(ctx)
	}
	line := "y\n"
	if len(args) > 0 {
		line = strings.Join(args, " ") + "\n"
	}
	if intoPipe(out) {
		io.WriteString(out, strings.Repeat(line, pipeSize/len(line)+1))
		return 141, nil // 128 + SIGPIPE
	}
	for {
		if _, err := io.WriteString(out, line); writeStatus(p, "yes", err) != 0 {
			return 1, nil
		}
		if err := p.pace(ctx); err != nil {
			return 137, err
		}
	}
}

// checksum is md5sum or sha256sum: "<hex>  <file>" for each file, or
// for standard input ("-"); an endless device is hashed until killed.
func checksum(name string, newHash func() hash.Hash) Program {
	return func(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
		if len(args) == 0 {
			args = []string{"-"}
		}
		code := 0
		for _, file := range args {
			var data []byte
			var err error
			switch {
			case endless(file):
				return 137, p.Spin(ctx)
			case file == "-":
				if data, err = io.ReadAll(p.stdin(ctx)); err != nil && ctx.Err() != nil {
					return 137, ctx.Err()
				}
			default:
				if data, err = p.FS.ReadFile(file); err != nil {
					fmt.Fprintf(p.Stderr, "%s: can't open '%s': %s\n", name, file, describe(err))
					code = 1
					continue
				}
			}
			h := newHash()
			h.Write(data)
			fmt.Fprintf(out, "%x  %s\n", h.Sum(nil), file)
		}
		return code, nil
	}
}

// catEndless is cat of an endless device: a pipe filled (its bytes are
// zeros), or a busy core until killed.
func catEndless(ctx context.Context, p *Process, out io.Writer) (int, error) {
	if intoPipe(out) {
		out.Write(make([]byte, pipeSize))
		return 141, nil
	}
	return 137, p.Spin(ctx)
}
