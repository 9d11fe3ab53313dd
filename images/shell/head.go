package shell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// head [-n N] [FILE]...: the first N lines (10) of each FILE, or of
// standard input; `head -n 1 /sys/fs/cgroup/cpu.max` is how Kubernetes'
// resize tests read a cgroup file. Several files are each preceded by
// "==> FILE <==", as busybox's are.
func head(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	lines := 10
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		text := ""
		switch {
		case a == "-n" && i+1 < len(args):
			i++
			text = args[i]
		case strings.HasPrefix(a, "-n"):
			text = a[2:]
		case len(a) > 1 && a[0] == '-' && a != "-": // head -1
			text = a[1:]
		default:
			files = append(files, a)
			continue
		}
		n, err := strconv.Atoi(text)
		if err != nil || n < 0 {
			fmt.Fprintf(p.Stderr, "head: invalid number '%s'\n", text)
			return 1, nil
		}
		lines = n
	}
	texts, read, code := p.inputOf(ctx, "head", files)
	for i, text := range texts {
		if len(files) > 1 {
			if i > 0 {
				io.WriteString(out, "\n")
			}
			fmt.Fprintf(out, "==> %s <==\n", read[i])
		}
		out.Write(firstLines([]byte(text), lines))
	}
	return code, nil
}

// firstLines is data up to the end of its n-th line.
func firstLines(data []byte, n int) []byte {
	end := 0
	for ; n > 0 && end < len(data); n-- {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			return data
		}
		end += i + 1
	}
	return data[:end]
}
