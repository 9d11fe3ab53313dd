package shell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// tailPollInterval is how often `tail -f` looks for what was appended:
// busybox's tail sleeps a second between reads too.
const tailPollInterval = time.Second

// tail [-f] [-n N] [FILE]: the last N lines (10) of FILE, or of standard
// input. With -f it then follows FILE, printing what is appended, until
// the container is killed: `tail -f /dev/null` is the usual way to keep a
// container running with nothing to do.
func tail(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	lines, follow := 10, false
	var files []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-f":
			follow = true
		case a == "-n" && i+1 < len(args):
			i++
			n, err := strconv.Atoi(strings.TrimPrefix(args[i], "+"))
			if err != nil || n < 0 {
				fmt.Fprintf(p.Stderr, "tail: invalid number '%s'\n", args[i])
				return 1, nil
			}
			lines = n
		case strings.HasPrefix(a, "-n"):
			return tail(ctx, p, append(append(append([]string{}, args[:i]...), "-n", a[2:]), args[i+1:]...), out)
		default:
			files = append(files, a)
		}
	}
	if len(files) == 0 || files[0] == "-" {
		data, err := io.ReadAll(p.stdin(ctx))
		if err != nil && ctx.Err() != nil {
			return 137, ctx.Err()
		}
		out.Write(lastLines(data, lines))
		return 0, nil
	}
	name := files[0]
	data, err := p.readTailed(name)
	if err != nil {
		fmt.Fprintf(p.Stderr, "tail: can't open '%s': %s\n", name, describe(err))
		if !follow {
			return 1, nil
		}
	}
	if _, err := out.Write(lastLines(data, lines)); writeStatus(p, "tail", err) != 0 {
		return 1, nil
	}
	for offset := len(data); follow; {
		if err := p.sleep(ctx, tailPollInterval); err != nil {
			return 137, err
		}
		now, err := p.readTailed(name)
		switch {
		case err != nil:
			continue
		case len(now) < offset:
			fmt.Fprintf(p.Stderr, "tail: %s: file truncated\n", name)
			offset = 0
		}
		if len(now) > offset {
			out.Write(now[offset:])
			offset = len(now)
		}
	}
	return 0, nil
}

// readTailed reads a file tail follows; /dev/null is always empty.
func (p *Process) readTailed(name string) ([]byte, error) {
	if name == "/dev/null" {
		return nil, nil
	}
	return p.FS.ReadFile(name)
}

// lastLines is the end of data from its n-th last line on.
func lastLines(data []byte, n int) []byte {
	if n == 0 {
		return nil
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end-- // the final newline ends the last line, it does not start one
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			if n--; n == 0 {
				return data[i+1:]
			}
		}
	}
	return bytes.Clone(data)
}
