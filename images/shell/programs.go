package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"
)

// A Program gets its arguments (without its own name) and where its
// standard output goes, and returns its exit status. An error stops the
// whole process: exitError for `exit`, ctx's error when it is killed.
type Program func(ctx context.Context, p *Process, args []string, out io.Writer) (int, error)

// programs are the commands every simulated container has, by base name
// (/bin/echo is echo); an image adds its own (Options.Programs).
var programs map[string]Program

func init() { // a map literal would refer to sh, which refers back to programs
	programs = map[string]Program{
		"sh": sh, "bash": bash,
		"sleep": sleepProgram, "exit": exitProgram, "true": status(0), ":": status(0), "false": status(1),
		"echo": echo, "printf": printf, "env": env, "printenv": printenv, "cat": cat, "ls": ls,
		"touch": touch, "rm": rm, "mv": mv, "dd": dd, "mkdir": mkdir, "test": test, "[": bracket, "[[": doubleBracket, "expr": expr,
		"date": date, "hostname": hostname, "tar": tarProgram, "hexdump": hexdump, "tail": tail, "head": head, "id": id, "mount": mountProgram,
		"wc": wc, "awk": awk, "grep": grep, "cut": cut, "sysctl": sysctl, "ip": ip,
		"curl": curl, "wget": wget, "nc": nc, // net.go
		"nslookup": nslookup, "dig": dig, "getent": getent, "seq": seq, // dns.go
		"yes": yes, "md5sum": md5sum, "sha256sum": sha256sum, // hogs.go
	}
}

func status(code int) Program {
	return func(context.Context, *Process, []string, io.Writer) (int, error) { return code, nil }
}

// sh -c SCRIPT runs SCRIPT; sh FILE runs the file; sh alone reads its
// standard input (interactive.go), which a container does not have
// unless its spec says stdin: true, so it ends at once: why busybox's
// default command exits straight away.
func sh(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	var script string
	// Options before the script (sh -x -c SCRIPT, as Kubernetes' e2e
	// RunHostCmd runs every exec; sh -ec SCRIPT) are accepted; -x's
	// trace on stderr is not printed.
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && args[0] != "-c" {
		if strings.ContainsRune(args[0], 'c') {
			args = append([]string{"-c"}, args[1:]...)
			break
		}
		args = args[1:]
	}
	switch {
	case len(args) >= 2 && args[0] == "-c":
		script = args[1]
	case len(args) >= 1 && !strings.HasPrefix(args[0], "-"):
		data, err := p.FS.ReadFile(args[0])
		if err != nil {
			fmt.Fprintf(p.Stderr, "sh: can't open '%s': No such file or directory\n", args[0])
			return 2, nil
		}
		script = string(data)
	default:
		return p.subshell(func() (int, error) { return p.readCommands(ctx, "sh", out) })
	}
	// A shell started by a shell has its own variables, and its `exit`
	// ends only itself.
	return p.subshell(func() (int, error) {
		err := p.runScript(ctx, script, out)
		return p.status, err
	})
}

// sleep N waits N seconds (fractions and "infinity" allowed) of the clock.
func sleepProgram(ctx context.Context, p *Process, args []string, _ io.Writer) (int, error) {
	if len(args) == 0 {
		fmt.Fprintln(p.Stderr, "sleep: missing operand")
		return 1, nil
	}
	d := time.Duration(math.MaxInt64)
	if args[0] != "infinity" {
		// A suffix s, m, h or d multiplies the number, as busybox's sleep
		// has it: `sleep 1d` keeps a container up for a day.
		num, unit := args[0], time.Second
		for suffix, u := range map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour} {
			if n, ok := strings.CutSuffix(args[0], suffix); ok {
				num, unit = n, u
			}
		}
		secs, err := strconv.ParseFloat(num, 64)
		if err != nil || secs < 0 {
			fmt.Fprintf(p.Stderr, "sleep: invalid number '%s'\n", args[0])
			return 1, nil
		}
		if f := secs * float64(unit); f < float64(math.MaxInt64) {
			d = time.Duration(f)
		}
	}
	return 0, p.sleep(ctx, d)
}

func exitProgram(_ context.Context, p *Process, args []string, _ io.Writer) (int, error) {
	code := p.status
	if len(args) > 0 {
		n, err := strconv.Atoi(args[0])
		if err != nil {
			fmt.Fprintf(p.Stderr, "sh: exit: Illegal number: %s\n", args[0])
			n = 2
		}
		code = n & 0xff
	}
	return code, exitError{code: code}
}

func echo(_ context.Context, p *Process, args []string, out io.Writer) (int, error) {
	newline := true
	if len(args) > 0 && args[0] == "-n" {
		newline, args = false, args[1:]
	}
	s := strings.Join(args, " ")
	if newline {
		s += "\n"
	}
	_, err := io.WriteString(out, s)
	return writeStatus(p, "sh", err), nil
}

// writeStatus is a program's status after writing its output: 1, with
// busybox's "sh: write error: No space left on device", when the file
// it writes to is full (a tmpfs at its size).
func writeStatus(p *Process, name string, err error) int {
	if errors.Is(err, ErrNoSpace) {
		fmt.Fprintf(p.Stderr, "%s: write error: %v\n", name, err)
		return 1
	}
	return 0
}

// printf FORMAT [ARG...] knows %s, %d, %% and the escapes \n and \t.
func printf(_ context.Context, p *Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 {
		fmt.Fprintln(p.Stderr, "printf: missing format")
		return 1, nil
	}
	format := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(args[0])
	rest := args[1:]
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 >= len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		arg := ""
		if format[i] != '%' && len(rest) > 0 {
			arg, rest = rest[0], rest[1:]
		}
		switch format[i] {
		case '%':
			b.WriteByte('%')
		case 'd':
			n, _ := strconv.Atoi(arg)
			b.WriteString(strconv.Itoa(n))
		default: // %s, and what is not simulated prints its argument
			b.WriteString(arg)
		}
	}
	_, err := io.WriteString(out, b.String())
	return writeStatus(p, "printf", err), nil
}

// env prints the environment, one NAME=value a line, in the container's order.
func env(_ context.Context, p *Process, _ []string, out io.Writer) (int, error) {
	for _, kv := range p.env {
		fmt.Fprintln(out, kv)
	}
	return 0, nil
}

// printenv [NAME...]: all of it, or the named values (1 if one is unset).
func printenv(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 {
		return env(ctx, p, nil, out)
	}
	code := 0
	for _, name := range args {
		found := false
		for _, kv := range p.env {
			if k, v, _ := strings.Cut(kv, "="); k == name {
				fmt.Fprintln(out, v)
				found = true
			}
		}
		if !found {
			code = 1
		}
	}
	return code, nil
}

// cat FILE... prints the files; with none, or "-", its standard input.
func cat(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 {
		args = []string{"-"}
	}
	code := 0
	for _, name := range args {
		if name == "-" {
			if _, err := io.Copy(out, p.stdin(ctx)); err != nil && ctx.Err() != nil {
				return 137, ctx.Err()
			}
			continue
		}
		if endless(name) { // cat /dev/urandom > /dev/null: a busy core (hogs.go)
			return catEndless(ctx, p, out)
		}
		data, err := p.FS.ReadFile(name)
		if err != nil {
			fmt.Fprintf(p.Stderr, "cat: can't open '%s': %s\n", name, describe(err))
			code = 1
			continue
		}
		if _, err := out.Write(data); writeStatus(p, "cat", err) != 0 {
			return 1, nil
		}
	}
	return code, nil
}

func ls(_ context.Context, p *Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 {
		args = []string{"/"}
	}
	code := 0
	for _, dir := range args {
		names, err := p.FS.List(dir)
		if err != nil {
			fmt.Fprintf(p.Stderr, "ls: %s: %s\n", dir, describe(err))
			code = 1
			continue
		}
		for _, n := range names {
			fmt.Fprintln(out, n)
		}
	}
	return code, nil
}

func touch(_ context.Context, p *Process, args []string, _ io.Writer) (int, error) {
	code := 0
	for _, name := range args {
		if exists, _ := p.FS.Stat(name); !exists {
			if err := p.FS.writable(name); err != nil {
				fmt.Fprintf(p.Stderr, "touch: %s: %s\n", name, describe(err))
				code = 1
				continue
			}
			p.FS.WriteFile(name, nil)
		}
	}
	return code, nil
}

// rm [-f] [-r] FILE...
func rm(_ context.Context, p *Process, args []string, _ io.Writer) (int, error) {
	set, names := flags(args, "fr")
	code := 0
	for _, name := range names {
		if err := p.FS.Remove(name, set['r']); err != nil && !(set['f'] && errors.Is(err, fs.ErrNotExist)) {
			fmt.Fprintf(p.Stderr, "rm: can't remove '%s': %s\n", name, describe(err))
			code = 1
		}
	}
	return code, nil
}

// mkdir [-p] DIR...
func mkdir(_ context.Context, p *Process, args []string, _ io.Writer) (int, error) {
	set, names := flags(args, "p")
	code := 0
	for _, name := range names {
		if err := p.FS.Mkdir(name, set['p']); err != nil {
			fmt.Fprintf(p.Stderr, "mkdir: can't create directory '%s': %s\n", name, describe(err))
			code = 1
		}
	}
	return code, nil
}

// flags splits leading one-letter flags (-f, -rf) from the operands.
func flags(args []string, known string) (set map[byte]bool, rest []string) {
	set = map[byte]bool{}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		for _, c := range []byte(args[0][1:]) {
			if strings.IndexByte(known, c) >= 0 {
				set[c] = true
			}
		}
		args = args[1:]
	}
	return set, args
}

func describe(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "No such file or directory"
	}
	if errors.Is(err, fs.ErrExist) {
		return "File exists"
	}
	return err.Error()
}

func bracket(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 || args[len(args)-1] != "]" {
		fmt.Fprintln(p.Stderr, "sh: [: missing ]")
		return 2, nil
	}
	return test(ctx, p, args[:len(args)-1], out)
}

// test knows ! and the one- and two-operand tests a container script
// checks: -e -f -d -z -n FILE/STRING, = != between strings, -eq -ne -lt
// -le -gt -ge between numbers.
func test(_ context.Context, p *Process, args []string, _ io.Writer) (int, error) {
	negate := len(args) > 0 && args[0] == "!"
	if negate {
		args = args[1:]
	}
	ok, valid := evalTest(p, args)
	if !valid {
		fmt.Fprintf(p.Stderr, "sh: test: %s: unknown operand\n", strings.Join(args, " "))
		return 2, nil
	}
	if ok != negate {
		return 0, nil
	}
	return 1, nil
}

func evalTest(p *Process, args []string) (ok, valid bool) {
	switch len(args) {
	case 0:
		return false, true
	case 1:
		return args[0] != "", true
	case 2:
		exists, isDir := p.FS.Stat(args[1])
		switch args[0] {
		case "-e", "-r": // every file of a container is readable by it
			return exists, true
		case "-f":
			return exists && !isDir, true
		case "-d":
			return isDir, true
		case "-s": // exists and is not empty
			data, err := p.FS.ReadFile(args[1])
			return exists && (isDir || (err == nil && len(data) > 0)), true
		case "-z":
			return args[1] == "", true
		case "-n":
			return args[1] != "", true
		}
	case 3:
		a, b := args[0], args[2]
		switch args[1] {
		case "=", "==":
			return a == b, true
		case "!=":
			return a != b, true
		}
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		if errA != nil || errB != nil {
			return false, false
		}
		switch args[1] {
		case "-eq":
			return x == y, true
		case "-ne":
			return x != y, true
		case "-lt":
			return x < y, true
		case "-le":
			return x <= y, true
		case "-gt":
			return x > y, true
		case "-ge":
			return x >= y, true
		}
	}
	return false, false
}

// date prints the clock's time as date(1) does: "Tue Dec  1 09:53:43 UTC 2026".
func date(_ context.Context, p *Process, _ []string, out io.Writer) (int, error) {
	fmt.Fprintln(out, p.Clock.Now().UTC().Format("Mon Jan _2 15:04:05 MST 2006"))
	return 0, nil
}

func hostname(_ context.Context, p *Process, _ []string, out io.Writer) (int, error) {
	fmt.Fprintln(out, p.Hostname)
	return 0, nil
}
