package shell

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// screen is what a client shows of a terminal's output.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(b)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// session is `kubectl exec -it`: sh on a Terminal, keys typed through a
// pipe, and its exit code once it ends.
type session struct {
	term   *Terminal
	keys   *io.PipeWriter
	screen *screen
	done   chan struct{}
	code   int
	err    error
}

func startSession(t *testing.T, fs *FS, argv ...string) *session {
	t.Helper()
	r, w := io.Pipe()
	s := &session{keys: w, screen: &screen{}, done: make(chan struct{})}
	term := NewTerminal(r, s.screen)
	s.term = term
	p := New(Options{FS: fs, Stdin: term, Stdout: term.Output(), Stderr: term.Output(), Hostname: "web-1"})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); w.Close() })
	go func() {
		defer close(s.done)
		s.code, s.err = p.Exec(ctx, argv)
	}()
	return s
}

func (s *session) typeKeys(t *testing.T, keys string) {
	t.Helper()
	if _, err := s.keys.Write([]byte(keys)); err != nil {
		t.Fatal(err)
	}
}

// shows waits until the screen holds want.
func (s *session) shows(t *testing.T, want string) {
	t.Helper()
	testserver.EventuallyWithin(t, 5*time.Second, "the screen shows "+strings.ReplaceAll(want, "\r\n", `\r\n`), func() (bool, string) {
		got := s.screen.String()
		return strings.Contains(got, want), got
	})
}

func (s *session) exits(t *testing.T) int {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("the shell did not exit; screen:\n%q", s.screen.String())
	}
	if s.err != nil {
		t.Fatalf("exec: %v", s.err)
	}
	return s.code
}

func TestAnInteractiveShellOnATerminal(t *testing.T) {
	fs := NewFS()
	fs.WriteFile("/bin/busybox", nil)
	s := startSession(t, fs, "sh")
	s.shows(t, "/ # ")
	s.typeKeys(t, "echo $HOSTNAME\r")
	s.shows(t, "/ # echo $HOSTNAME\r\nweb-1\r\n/ # ")
	s.typeKeys(t, "X=5\r")
	s.typeKeys(t, "echo x$X\r")
	s.shows(t, "x5\r\n")
	s.typeKeys(t, "if true; then\r")
	s.shows(t, "if true; then\r\n> ")
	s.typeKeys(t, "echo inside; fi\r")
	s.shows(t, "inside\r\n")
	s.typeKeys(t, "echo typo\x7f\x7f\x7f\x7fok\r")
	s.shows(t, "\b \b\b \b\b \b\b \bok\r\nok\r\n")
	s.typeKeys(t, "exit 2\r")
	if code := s.exits(t); code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
}

func TestCtrlCInterruptsTheCommandAndTheShellGoesOn(t *testing.T) {
	s := startSession(t, NewFS(), "bash")
	s.shows(t, "root@web-1:/# ")
	s.typeKeys(t, "sleep 3600\r")
	testserver.EventuallyWithin(t, 5*time.Second, "sleep runs in the foreground", func() (bool, string) {
		s.term.mu.Lock()
		defer s.term.mu.Unlock()
		return s.term.onInterrupt != nil, s.screen.String()
	})
	s.typeKeys(t, "\x03")
	s.shows(t, "^C\r\nroot@web-1:/# ")
	s.typeKeys(t, "echo $?\r")
	s.shows(t, "130\r\n")
	s.typeKeys(t, "half a line\x03")
	s.typeKeys(t, "\x04") // Ctrl-D at an empty prompt ends the shell
	s.shows(t, "exit\r\n")
	if code := s.exits(t); code != 130 {
		t.Errorf("exit code %d, want 130 (the last status)", code)
	}
}

func TestShReadsItsScriptFromStdinWithoutATerminal(t *testing.T) {
	var out strings.Builder
	p := New(Options{Stdin: strings.NewReader("X=1\necho $X\ncat\nfrom stdin\n"), Stdout: &out})
	code, err := p.Exec(context.Background(), []string{"sh"})
	if err != nil || code != 0 {
		t.Fatalf("code %d, err %v", code, err)
	}
	// cat reads what sh has not: the rest of stdin.
	if want := "1\nfrom stdin\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
}

func TestAKilledProcessStopsWaitingForStdin(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	p := New(Options{Stdin: r})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := p.Exec(ctx, []string{"cat"}); done <- err }()
	cancel()
	select {
	case err := <-done:
		if err != ErrKilled {
			t.Errorf("err %v, want ErrKilled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cat still waits for stdin after the kill")
	}
}

func TestTarCreatesAndExtractsWhatKubectlCpSends(t *testing.T) {
	fs := NewFS()
	fs.WriteFile("/data/a.txt", []byte("alpha"))
	fs.WriteFile("/data/sub/b.txt", []byte("beta"))
	var archive, errOut bytes.Buffer
	p := New(Options{FS: fs, Stdout: &archive, Stderr: &errOut})
	if code, err := p.Exec(context.Background(), []string{"tar", "cf", "-", "/data"}); code != 0 || err != nil {
		t.Fatalf("tar cf: code %d, err %v, stderr %s", code, err, errOut.String())
	}
	if want := "tar: Removing leading `/' from member names\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	var names []string
	r := tar.NewReader(bytes.NewReader(archive.Bytes()))
	for h, err := r.Next(); err == nil; h, err = r.Next() {
		names = append(names, h.Name)
	}
	if got, want := strings.Join(names, " "), "data/ data/a.txt data/sub/ data/sub/b.txt"; got != want {
		t.Errorf("members %q, want %q", got, want)
	}

	into := NewFS()
	into.Mkdir("/restore", false)
	q := New(Options{FS: into, Stdin: bytes.NewReader(archive.Bytes()), Stderr: &errOut})
	if code, err := q.Exec(context.Background(), []string{"tar", "--no-same-permissions", "--no-same-owner", "-xmf", "-", "-C", "/restore"}); code != 0 || err != nil {
		t.Fatalf("tar x: code %d, err %v, stderr %s", code, err, errOut.String())
	}
	for name, want := range map[string]string{"/restore/data/a.txt": "alpha", "/restore/data/sub/b.txt": "beta"} {
		if got, err := into.ReadFile(name); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestTarErrorsAsTheImagesTarWordsThem(t *testing.T) {
	tests := []struct {
		name    string
		busybox bool
		argv    []string
		stderr  string
		code    int
	}{
		{"GNU tar, a path that is not there", false, []string{"tar", "cf", "-", "/nope"},
			"tar: /nope: Cannot stat: No such file or directory\ntar: Exiting with failure status due to previous errors\n", 2},
		{"busybox tar, the same", true, []string{"tar", "cf", "-", "/nope"}, "tar: /nope: No such file or directory\n", 2},
		{"no mode", false, []string{"tar", "-f", "-"}, "tar: You must specify one of the '-Acdtrux' options\n", 2},
		{"a directory to extract into that is not there", false, []string{"tar", "xf", "-", "-C", "/nope"},
			"tar: /nope: Cannot open: No such file or directory\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewFS()
			if tt.busybox {
				fs.WriteFile("/bin/busybox", nil)
			}
			var errOut strings.Builder
			p := New(Options{FS: fs, Stdout: io.Discard, Stderr: &errOut})
			code, _ := p.Exec(context.Background(), tt.argv)
			if code != tt.code || errOut.String() != tt.stderr {
				t.Errorf("code %d, stderr %q; want %d, %q", code, errOut.String(), tt.code, tt.stderr)
			}
		})
	}
}
