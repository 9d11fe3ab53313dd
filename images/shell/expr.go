package shell

import (
	"context"
	"fmt"
	"io"
	"strconv"
)

// Two busybox commands Kubernetes' Job tests run in their pods:
//
//	[[ -r /data/foo ]]                  # busybox ash: test, closed by ]]
//	$(expr ${JOB_COMPLETION_INDEX} % 2) # integer arithmetic
//
// [[ is test, as busybox's ash implements it (without the pattern
// matching of bash's). expr evaluates one binary operation on integers
// (+ - * / % and the comparisons = != < <= > >=), prints the result, and
// exits 1 when it is 0, as expr(1) does; a single operand is printed.

// doubleBracket is [[ ... ]].
func doubleBracket(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 || args[len(args)-1] != "]]" {
		fmt.Fprintln(p.Stderr, "sh: [[: missing ]]")
		return 2, nil
	}
	return test(ctx, p, args[:len(args)-1], out)
}

func expr(_ context.Context, p *Process, args []string, out io.Writer) (int, error) {
	var result string
	switch len(args) {
	case 1:
		result = args[0]
	case 3:
		x, errX := strconv.Atoi(args[0])
		y, errY := strconv.Atoi(args[2])
		if errX != nil || errY != nil {
			fmt.Fprintln(p.Stderr, "expr: non-numeric argument")
			return 2, nil
		}
		var v int
		switch op := args[1]; op {
		case "+":
			v = x + y
		case "-":
			v = x - y
		case "*":
			v = x * y
		case "/", "%":
			if y == 0 {
				fmt.Fprintln(p.Stderr, "expr: division by zero")
				return 2, nil
			}
			if v = x / y; op == "%" {
				v = x % y
			}
		case "=", "!=", "<", "<=", ">", ">=":
			v = boolInt(map[string]bool{"=": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])
		default:
			fmt.Fprintln(p.Stderr, "expr: syntax error")
			return 2, nil
		}
		result = strconv.Itoa(v)
	default:
		fmt.Fprintln(p.Stderr, "expr: syntax error")
		return 2, nil
	}
	fmt.Fprintln(out, result)
	if result == "0" || result == "" {
		return 1, nil
	}
	return 0, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
