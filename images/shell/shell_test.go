package shell

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 12, 1, 9, 53, 43, 0, time.UTC)

// run runs a script to its end on a clock that moves by itself (every
// sleep returns at once, having advanced the clock), and returns what it
// printed and its exit code.
func run(t *testing.T, script string, env ...string) (stdout, stderr string, code int, fs *FS) {
	t.Helper()
	var out, errOut strings.Builder
	fs = NewFS()
	fs.WriteFile("/etc/config/special.how", []byte("very"))
	p := New(Options{Clock: &instantClock{FakeClock: clocktesting.NewFakeClock(epoch)}, FS: fs,
		Stdout: &out, Stderr: &errOut, Env: env, Hostname: "web-1"})
	code, err := p.Script(context.Background(), script)
	if err != nil {
		t.Fatalf("%q: %v", script, err)
	}
	return out.String(), errOut.String(), code, fs
}

// instantClock steps itself by whatever a sleep asks for.
type instantClock struct{ *clocktesting.FakeClock }

func (c *instantClock) After(d time.Duration) <-chan time.Time {
	ch := c.FakeClock.After(d)
	c.Step(d)
	return ch
}

func TestScripts(t *testing.T) {
	tests := []struct {
		name, script   string
		env            []string
		stdout, stderr string
		code           int
	}{
		{"echo and exit", `echo hello; exit 3`, nil, "hello\n", "", 3},
		{"the exit status of the last command", `true; false`, nil, "", "", 1},
		{"&& runs on success, || on failure", `false && echo no || echo yes; true && echo and`, nil, "yes\nand\n", "", 0},
		{"variables, braces and $?", `X=1; echo $X ${X}2 "$X $Y"; false; echo $?`, nil, "1 12 1 \n1\n", "", 0},
		{"the environment, as the seed's ConfigMap example prints it", `env`, []string{"SPECIAL_LEVEL_KEY=very", "SPECIAL_TYPE_KEY=charm"},
			"SPECIAL_LEVEL_KEY=very\nSPECIAL_TYPE_KEY=charm\n", "", 0},
		{"printenv of one variable", `printenv SPECIAL; printenv NONE`, []string{"SPECIAL=very"}, "very\n", "", 1},
		{"single quotes do not expand", `X=a; echo '$X' "$X"`, nil, "$X a\n", "", 0},
		{"an unquoted variable splits into words", `L="a b  c"; for i in $L; do echo "<$i>"; done`, nil, "<a>\n<b>\n<c>\n", "", 0},
		{"a quoted one does not", `L="a b"; for i in "$L"; do echo "<$i>"; done`, nil, "<a b>\n", "", 0},
		{"cat a mounted file", `cat /etc/config/special.how`, nil, "very", "", 0},
		{"cat what is not there", `cat /nope`, nil, "", "cat: can't open '/nope': No such file or directory\n", 1},
		{"an unknown program", `nginx-debug`, nil, "", "sh: nginx-debug: not found\n", 127},
		{"the liveness example's file dance", `touch /tmp/healthy; test -f /tmp/healthy && echo up; rm -f /tmp/healthy; [ -e /tmp/healthy ] || echo gone`,
			nil, "up\ngone\n", "", 0},
		{"redirects write and append", `echo a > /tmp/f; echo b >> /tmp/f; cat /tmp/f`, nil, "a\nb\n", "", 0},
		{"2> and >&2 move stderr and stdout", `cat /nope 2> /tmp/err; echo to-err >&2; cat /tmp/err`, nil,
			"cat: can't open '/nope': No such file or directory\n", "to-err\n", 0},
		{"> /dev/null 2>&1 silences both, in order", `cat /nope > /dev/null 2>&1; echo out 2>&1 > /dev/null`, nil, "", "", 0},
		{"mkdir and ls", `mkdir -p /data/x; touch /data/b /data/a; ls /data`, nil, "a\nb\nx\n", "", 0},
		{"if, elif, else", `for n in 1 2 3; do if [ $n -eq 1 ]; then echo one; elif [ $n = 2 ]; then echo two; else echo many; fi; done`,
			nil, "one\ntwo\nmany\n", "", 0},
		{"a while loop with a counter file", "i=0\nwhile [ ! -f /tmp/stop ]; do\n  echo tick $i\n  touch /tmp/stop\ndone", nil, "tick 0\n", "", 0},
		{"printf", `printf '%s=%d%%\n' cpu 42`, nil, "cpu=42%\n", "", 0},
		{"date on the clock, and hostname", `date; hostname`, nil, "Tue Dec  1 09:53:43 UTC 2026\nweb-1\n", "", 0},
		{"sleep moves the clock", `sleep 30; date`, nil, "Tue Dec  1 09:54:13 UTC 2026\n", "", 0},
		{"sleep takes s, m, h and d", `sleep 1d; sleep 1h; sleep 2m; sleep 3s; date`, nil, "Wed Dec  2 10:55:46 UTC 2026\n", "", 0},
		{"bash -c inside sh -c, with /bin paths", `/bin/bash -c 'echo inner; exit 4'; echo $?`, nil, "inner\n4\n", "", 0},
		{"exit inside a loop ends the process", `while true; do exit 7; done; echo never`, nil, "", "", 7},
		{"a syntax error is status 2", `if true; then echo x`, nil, "", "sh: syntax error: unexpected end of file (expecting \"fi\")\n", 2},
		{"a pipe", `echo a | cat`, nil, "a\n", "", 0},
		{"background jobs are not simulated, and say so", `sleep 1 & echo a`, nil, "", "sh: syntax error near unexpected token `&' (background jobs are not simulated)\n", 2},
		{"comments", "# a comment\necho hi # trailing", nil, "hi\n", "", 0},
		{"tail: the last lines", `printf '1\n2\n3\n' > /tmp/l; tail -n 2 /tmp/l; tail -n1 /tmp/l; tail -n 0 /tmp/l; tail /tmp/l`, nil,
			"2\n3\n3\n1\n2\n3\n", "", 0},
		{"tail what is not there", `tail /nope`, nil, "", "tail: can't open '/nope': No such file or directory\n", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code, _ := run(t, tc.script, tc.env...)
			if out != tc.stdout || errOut != tc.stderr || code != tc.code {
				t.Fatalf("got stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %d", out, errOut, code, tc.stdout, tc.stderr, tc.code)
			}
		})
	}
}

// A killed process stops where it is, in a sleep or in a busy loop: the
// runtime's SIGKILL.
func TestAKilledProcessStopsAtOnce(t *testing.T) {
	for _, script := range []string{`echo start; sleep 600; echo never`, `echo start; while true; do :; done`} {
		clk := clocktesting.NewFakeClock(epoch)
		out := &syncBuilder{}
		p := New(Options{Clock: clk, Stdout: out})
		ctx, kill := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { _, err := p.Script(ctx, script); done <- err }()
		waitUntil(t, clk.HasWaiters) // the sleep, or the busy loop's pacing, waits on the clock
		kill()
		if err := <-done; !errors.Is(err, ErrKilled) {
			t.Fatalf("%q: got %v, want ErrKilled", script, err)
		}
		if out.String() != "start\n" {
			t.Fatalf("%q printed %q", script, out.String())
		}
	}
}

// `tail -f` follows a file until killed: what is appended is printed a
// poll later, and `tail -f /dev/null` keeps a container running.
func TestTailFollowsUntilKilled(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	fs := NewFS()
	fs.WriteFile("/var/log/app.log", []byte("old\n"))
	out := &syncBuilder{}
	p := New(Options{Clock: clk, FS: fs, Stdout: out})
	ctx, kill := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := p.Script(ctx, `tail -f /var/log/app.log`); done <- err }()
	waitUntil(t, clk.HasWaiters)
	fs.WriteFile("/var/log/app.log", []byte("old\nnew\n"))
	clk.Step(tailPollInterval)
	waitUntil(t, func() bool { return out.String() == "old\nnew\n" })
	kill()
	if err := <-done; !errors.Is(err, ErrKilled) {
		t.Fatalf("tail -f: got %v, want ErrKilled", err)
	}

	p = New(Options{Clock: clk, FS: fs})
	ctx, kill = context.WithCancel(context.Background())
	go func() { _, err := p.Script(ctx, `tail -f /dev/null`); done <- err }()
	waitUntil(t, clk.HasWaiters)
	clk.Step(time.Hour)
	waitUntil(t, clk.HasWaiters) // polling again, not ended
	select {
	case err := <-done:
		t.Fatalf("tail -f /dev/null ended by itself: %v", err)
	default:
	}
	kill()
	if err := <-done; !errors.Is(err, ErrKilled) {
		t.Fatalf("tail -f /dev/null: got %v, want ErrKilled", err)
	}
}

func FuzzScript(f *testing.F) {
	for _, s := range []string{`echo "a $B" 'c'; exit 2`, "while true; do sleep 1; done", `if [ -f x ]; then :; elif false; then x; else y; fi`,
		`for i in 1 2; do echo $i; done > /tmp/o`, `X=${Y}z "$`, `echo \"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		// Any input is a process that ends (or is killed): never a panic.
		New(Options{Clock: &instantClock{FakeClock: clocktesting.NewFakeClock(epoch)}}).Script(ctx, script)
	})
}

// SIGTERM reaches a program that handles it; a shell ignores it, so its
// sleep runs to the end (here, when the clock is stepped past it).
func TestTerminateReachesOnlyWhatHandlesIt(t *testing.T) {
	server := func(ctx context.Context, p *Process, _ []string, out io.Writer) (int, error) {
		io.WriteString(out, "serving\n")
		select {
		case <-ctx.Done():
			return 137, ctx.Err()
		case <-p.Terminated():
			io.WriteString(out, "shutting down\n")
			return 0, nil
		}
	}
	for _, tc := range []struct{ script, out string }{
		{`echo start; server; echo "exit $?"`, "start\nserving\nshutting down\nexit 0\n"},
		{`echo start; sleep 600; echo "slept on"`, "start\nslept on\n"},
	} {
		clk := clocktesting.NewFakeClock(epoch)
		out := &syncBuilder{}
		p := New(Options{Clock: clk, Stdout: out, Programs: map[string]Program{"server": server}})
		done := make(chan int, 1)
		go func() { code, _ := p.Script(context.Background(), tc.script); done <- code }()
		waitUntil(t, func() bool { return strings.Contains(out.String(), "serving") || clk.HasWaiters() })
		p.Terminate()
		clk.Step(600 * time.Second)
		if code := <-done; code != 0 || out.String() != tc.out {
			t.Fatalf("%q: exit %d, printed %q; want 0, %q", tc.script, code, out.String(), tc.out)
		}
	}
}

// syncBuilder is a strings.Builder a process goroutine writes while the
// test reads.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitUntil waits for a process goroutine to reach a state, yielding to
// it, failing after 5 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatal("the process never got there")
		}
	}
}

// A program that holds more memory than the limit is OOM-killed: exit
// 137, ErrOOMKilled; under the limit it runs on.
func TestMemoryAboveTheLimitIsAnOOMKill(t *testing.T) {
	hog := func(_ context.Context, p *Process, args []string, _ io.Writer) (int, error) {
		n, _ := strconv.ParseInt(args[0], 10, 64)
		return 0, p.UseMemory(n)
	}
	for _, tc := range []struct {
		use, limit int64
		code       int
		err        error
	}{{use: 50, limit: 100}, {use: 200, limit: 0}, {use: 101, limit: 100, code: 137, err: ErrOOMKilled}} {
		p := New(Options{MemoryLimit: tc.limit, Programs: map[string]Program{"hog": hog}})
		code, err := p.Exec(context.Background(), []string{"sh", "-c", "hog " + strconv.FormatInt(tc.use, 10) + "; echo after"})
		if code != tc.code || !errors.Is(err, tc.err) || p.MemoryUsage() != tc.use {
			t.Errorf("use %d of %d: exit %d, %v, memory %d; want %d, %v", tc.use, tc.limit, code, err, p.MemoryUsage(), tc.code, tc.err)
		}
	}
}
