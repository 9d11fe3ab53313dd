package shell

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// seq [-s SEP] [-w] [FIRST [INCREMENT]] LAST prints the integers from
// FIRST (1) to LAST by INCREMENT (1), one a line, as coreutils' and
// busybox's seq do for the loops of scripts: `for i in $(seq 0 15)`.
// Fractions are not simulated.
func seq(_ context.Context, p *Process, args []string, out io.Writer) (int, error) {
	sep, width := "\n", false
	var nums []int
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-w":
			width = true
		case a == "-s" && i+1 < len(args):
			i++
			sep = args[i]
		case strings.HasPrefix(a, "-s") && len(a) > 2:
			sep = a[2:]
		default:
			n, err := strconv.Atoi(a)
			if err != nil {
				fmt.Fprintf(p.Stderr, "seq: invalid number '%s'\n", a)
				return 1, nil
			}
			nums = append(nums, n)
		}
	}
	first, step, last := 1, 1, 0
	switch len(nums) {
	case 1:
		last = nums[0]
	case 2:
		first, last = nums[0], nums[1]
	case 3:
		first, step, last = nums[0], nums[1], nums[2]
	default:
		fmt.Fprintln(p.Stderr, "Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST")
		return 1, nil
	}
	if step == 0 {
		fmt.Fprintln(p.Stderr, "seq: invalid Zero increment value: '0'")
		return 1, nil
	}
	digits := max(len(strconv.Itoa(first)), len(strconv.Itoa(last)))
	var b strings.Builder
	count := 0
	for n := first; (step > 0 && n <= last) || (step < 0 && n >= last); n += step {
		if count > 0 {
			b.WriteString(sep)
		}
		if width {
			fmt.Fprintf(&b, "%0*d", digits, n)
		} else {
			b.WriteString(strconv.Itoa(n))
		}
		if count++; b.Len() > 1<<16 { // a long sequence goes out as it is made
			if _, err := io.WriteString(out, b.String()); err != nil {
				return writeStatus(p, "seq", err), nil
			}
			b.Reset()
		}
	}
	if count > 0 {
		b.WriteString("\n")
	}
	_, err := io.WriteString(out, b.String())
	return writeStatus(p, "seq", err), nil
}
