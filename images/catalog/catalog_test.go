package catalog

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkube/mkube/images/shell"
	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)

// syncBuffer is written by the process goroutine while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitUntil polls a condition the process goroutine brings about,
// yielding to it, failing after 5 s; it never sleeps a fixed time.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatalf("the process never got to: %s", what)
		}
	}
}

// container is an image's process running as the runtime would run it.
type container struct {
	p              *shell.Process
	clk            *clocktesting.FakeClock
	stdout, stderr *syncBuffer
	kill           context.CancelFunc
	done           chan result
}

type result struct {
	code int
	err  error
}

func (c *container) exited() bool { return len(c.done) > 0 }

// start runs ref's image with argv (nil: its ENTRYPOINT and CMD), the
// image's files and environment plus env, under a memory limit.
func start(t *testing.T, ref string, argv, env []string, memLimit int64) *container {
	img := Lookup(ref)
	fs := shell.NewFS()
	for name, data := range img.Files {
		fs.WriteFile(name, []byte(data))
	}
	if argv == nil {
		argv = append(append([]string{}, img.Entrypoint...), img.Cmd...)
	}
	ctx, kill := context.WithCancel(context.Background())
	t.Cleanup(kill)
	c := &container{clk: clocktesting.NewFakeClock(epoch), stdout: &syncBuffer{}, stderr: &syncBuffer{},
		kill: kill, done: make(chan result, 1)}
	c.p = shell.New(shell.Options{Clock: c.clk, Stdout: c.stdout, Stderr: c.stderr, FS: fs, Hostname: "web-0",
		Env: append(img.Env, env...), Programs: img.Programs, MemoryLimit: memLimit})
	go func() {
		code, err := c.p.Exec(ctx, argv)
		c.done <- result{code, err}
	}()
	return c
}

const mi = 1 << 20

func TestImagesRun(t *testing.T) {
	terminate := func(_ *testing.T, c *container) { c.p.Terminate() }
	kill := func(_ *testing.T, c *container) { c.kill() }
	tests := []struct {
		name, ref  string
		argv, env  []string
		memLimit   int64
		ready      func(c *container) bool // nil: the process ends by itself
		ports      []int32                 // listening once ready
		stop       func(t *testing.T, c *container)
		code       int
		err        error
		stdout     []string // lines (or parts of them) printed, in order
		stderr     []string
		exactError string // the whole of stderr
	}{
		{name: "busybox's sh has no stdin and exits at once", ref: "docker.io/library/busybox:1.36", code: 0},
		{name: "alpine runs a command; the image's files are there", ref: "docker.io/library/alpine:3.21",
			argv: []string{"sh", "-c", "cat /etc/alpine-release"}, stdout: []string{"3.21.0"}},
		{name: "ubuntu's bash exits at once", ref: "docker.io/library/ubuntu:24.04"},
		{
			name: "mysql without a password option fails as the real entrypoint does", ref: "docker.io/library/mysql:8.4", code: 1,
			stdout: []string{
				"2026-12-01 11:00:00+00:00 [Note] [Entrypoint]: Entrypoint script for MySQL Server 8.4.3-1.el9 started.",
				"[Note] [Entrypoint]: Switching to dedicated user 'mysql'",
				"[Note] [Entrypoint]: Entrypoint script for MySQL Server 8.4.3-1.el9 started.",
			},
			exactError: "2026-12-01 11:00:00+00:00 [ERROR] [Entrypoint]: Database is uninitialized and password option is not specified\n" +
				"    You need to specify one of the following as an environment variable:\n" +
				"    - MYSQL_ROOT_PASSWORD\n    - MYSQL_ALLOW_EMPTY_PASSWORD\n    - MYSQL_RANDOM_ROOT_PASSWORD\n",
		},
		{
			name: "mysql with MYSQL_ROOT_PASSWORD serves until SIGTERM", ref: "mysql:8.4", env: []string{"MYSQL_ROOT_PASSWORD=secret"},
			ready: func(c *container) bool { return c.p.Listening(3306) && c.p.Listening(33060) },
			ports: []int32{3306, 33060}, stop: terminate,
			stdout: []string{"[Note] [Entrypoint]: Initializing database files", "MySQL init process done. Ready for start up."},
			stderr: []string{"[Server] X Plugin ready for connections", "port: 3306  MySQL Community Server - GPL.", "Shutdown complete (mysqld 8.4.3)"},
		},
		{
			name: "postgres without POSTGRES_PASSWORD fails", ref: "docker.io/library/postgres:17", code: 1,
			stderr: []string{"Error: Database is uninitialized and superuser password is not specified."},
		},
		{
			name: "nginx logs, listens on 80 and shuts down gracefully", ref: "docker.io/library/nginx:1.25",
			ready: func(c *container) bool { return c.p.Listening(80) }, ports: []int32{80}, stop: terminate,
			stdout: []string{
				"/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration",
				"/docker-entrypoint.sh: Configuration complete; ready for start up",
			},
			stderr: []string{
				`2026/12/01 11:00:00 [notice] 1#1: using the "epoll" event method`,
				"2026/12/01 11:00:00 [notice] 1#1: nginx/1.27.3",
				"2026/12/01 11:00:00 [notice] 1#1: start worker processes",
				"2026/12/01 11:00:00 [notice] 1#1: signal 3 (SIGQUIT) received, shutting down",
				"2026/12/01 11:00:00 [notice] 1#1: exit",
			},
		},
		{name: "nginx without `daemon off;` daemonizes and the container completes", ref: "nginx", argv: []string{"nginx"}},
		{
			name: "nginx, killed, is 137", ref: "nginx", ready: func(c *container) bool { return c.p.Listening(80) },
			stop: kill, code: 137, err: shell.ErrKilled,
		},
		{
			name: "httpd", ref: "docker.io/library/httpd:2.4",
			ready: func(c *container) bool { return c.p.Listening(80) }, ports: []int32{80}, stop: terminate,
			stderr: []string{"AH00558: httpd: Could not reliably determine the server's fully qualified domain name",
				"[Tue Dec 01 11:00:00.000000 2026] [mpm_event:notice] [pid 1:tid 140245036013440] AH00489: Apache/2.4.62 (Unix) configured -- resuming normal operations",
				"AH00492: caught SIGWINCH, shutting down gracefully"},
		},
		{
			name: "redis", ref: "docker.io/library/redis:7",
			ready: func(c *container) bool { return c.p.Listening(6379) }, ports: []int32{6379}, stop: terminate,
			stdout: []string{"1:C 01 Dec 2026 11:00:00.000 * oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
				"1:M 01 Dec 2026 11:00:00.000 * Ready to accept connections tcp",
				"Received SIGTERM scheduling shutdown...", "1:M 01 Dec 2026 11:00:00.000 # Redis is now ready to exit, bye bye..."},
		},
		{
			name: "the docs' stress over its memory limit is OOM-killed", ref: "docker.io/polinux/stress:latest",
			argv: []string{"stress", "--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"}, memLimit: 100 * mi,
			code: 137, err: shell.ErrOOMKilled, stdout: []string{"stress: info: [1] dispatching hogs: 0 cpu, 0 io, 1 vm, 0 hdd"},
		},
		{
			name: "stress under its limit holds the memory, ignores SIGTERM as PID 1, and runs until killed", ref: "polinux/stress",
			argv: []string{"stress", "--vm", "1", "--vm-bytes", "250m", "--vm-hang", "1"}, memLimit: 1024 * mi,
			ready: func(c *container) bool { return c.p.MemoryUsage() == 250*mi },
			stop: func(t *testing.T, c *container) {
				c.p.Terminate()
				// What stress does on SIGTERM: nothing, so there is no
				// state to wait for; it has at least not exited yet.
				for range 1000 {
					runtime.Gosched()
				}
				if c.exited() {
					t.Error("stress exited on SIGTERM")
				}
				c.kill()
			},
			code: 137, err: shell.ErrKilled,
		},
		{
			name: "stress --timeout completes", ref: "polinux/stress", argv: []string{"stress", "--cpu", "2", "--timeout", "1m"},
			ready: func(c *container) bool { return c.clk.HasWaiters() }, stop: func(_ *testing.T, c *container) { c.clk.Step(time.Minute) },
			stdout: []string{"dispatching hogs: 2 cpu, 0 io, 0 vm, 0 hdd", "stress: info: [1] successful run completed in 60s"},
		},
		{
			name: "pause runs until SIGTERM", ref: "registry.k8s.io/pause:3.10",
			ready: func(c *container) bool { return true }, stop: terminate,
			exactError: "Shutting down, got signal: Terminated\n",
		},
		{
			name: "agnhost liveness listens on 8080, prints nothing, and exits 2 on SIGTERM as a Go binary as PID 1 does",
			ref:  "registry.k8s.io/e2e-test-images/agnhost:2.40", argv: []string{"/agnhost", "liveness"},
			ready: func(c *container) bool { return c.p.Listening(8080) }, ports: []int32{8080}, stop: terminate, code: 2,
		},
		{
			name: "agnhost netexec logs its servers with Go's logger", ref: "registry.k8s.io/e2e-test-images/agnhost:2.52",
			argv:  []string{"/agnhost", "netexec", "--http-port", "9000"},
			ready: func(c *container) bool { return c.p.Listening(9000) }, ports: []int32{9000}, stop: terminate, code: 2,
			exactError: "2026/12/01 11:00:00 Started HTTP server on port 9000\n2026/12/01 11:00:00 Started UDP server on port  8081\n",
		},
		{
			name: "agnhost's CMD is pause, which says so", ref: "registry.k8s.io/e2e-test-images/agnhost:2.40",
			ready: func(c *container) bool { return c.stdout.String() != "" }, stop: terminate, code: 2, stdout: []string{"Paused"},
		},
		{
			name: "agnhost with an unknown subcommand fails as cobra does", ref: "registry.k8s.io/e2e-test-images/agnhost:2.40",
			argv: []string{"/agnhost", "livenes"}, code: 1,
			exactError: "Error: unknown command \"livenes\" for \"agnhost\"\nRun 'agnhost --help' for usage.\n",
		},
		{
			name: "goproxy listens on 8080", ref: "registry.k8s.io/goproxy:0.1",
			ready: func(c *container) bool { return c.p.Listening(8080) }, ports: []int32{8080}, stop: terminate, code: 2,
		},
		{
			name: "an unknown image runs as a generic server", ref: "docker.io/acme/shop:2",
			ready: func(c *container) bool { return c.stdout.String() != "" }, stop: terminate,
			stdout: []string{`image "docker.io/acme/shop:2" is not in mkube's catalog`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := start(t, tc.ref, tc.argv, tc.env, tc.memLimit)
			if tc.ready != nil {
				waitUntil(t, "ready", func() bool { return tc.ready(c) || c.exited() })
				if c.exited() {
					r := <-c.done
					t.Fatalf("exited (%d, %v) before it was ready; stdout %q stderr %q", r.code, r.err, c.stdout, c.stderr)
				}
				for _, port := range tc.ports {
					if !c.p.Listening(port) {
						t.Errorf("not listening on %d", port)
					}
				}
				tc.stop(t, c)
			}
			var r result
			select {
			case r = <-c.done:
			case <-time.After(5 * time.Second):
				t.Fatalf("did not exit; stdout %q stderr %q", c.stdout, c.stderr)
			}
			if r.code != tc.code || !errors.Is(r.err, tc.err) {
				t.Errorf("exit (%d, %v), want (%d, %v)", r.code, r.err, tc.code, tc.err)
			}
			checkLines(t, "stdout", c.stdout.String(), tc.stdout)
			checkLines(t, "stderr", c.stderr.String(), tc.stderr)
			if tc.exactError != "" && c.stderr.String() != tc.exactError {
				t.Errorf("stderr %q, want %q", c.stderr, tc.exactError)
			}
		})
	}
}

// checkLines checks that each of want is in got, in order.
func checkLines(t *testing.T, stream, got string, want []string) {
	t.Helper()
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s lacks %q (in order) in:\n%s", stream, w, got)
			return
		}
		rest = rest[i+len(w):]
	}
}

// A ConfigMap mounted over the default server moves nginx's port.
func TestNginxListensWhereItsConfigSays(t *testing.T) {
	img := Lookup("nginx")
	fs := shell.NewFS()
	fs.WriteFile("/etc/nginx/conf.d/default.conf", []byte("server {\n    listen 8080;\n}\n"))
	if got := nginxPorts(fs); !slices.Equal(got, []int32{8080}) {
		t.Fatalf("ports %v", got)
	}
	if !slices.Equal(img.Ports, []int32{80}) {
		t.Fatalf("EXPOSE %v", img.Ports)
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		ref        string
		known      bool
		entrypoint []string
		cmd        []string
	}{
		{"docker.io/library/nginx:1.25", true, []string{"/docker-entrypoint.sh"}, []string{"nginx", "-g", "daemon off;"}},
		{"docker.io/library/nginx@sha256:0a399eb16751829e1af26fea27b20c3ec28d7ab1fb72182879dcae1cca21206a", true,
			[]string{"/docker-entrypoint.sh"}, []string{"nginx", "-g", "daemon off;"}},
		{"nginx", true, []string{"/docker-entrypoint.sh"}, []string{"nginx", "-g", "daemon off;"}},
		{"library/redis:7", true, []string{"docker-entrypoint.sh"}, []string{"redis-server"}},
		{"registry.k8s.io/pause:3.10", true, []string{"/pause"}, nil},
		{"k8s.gcr.io/pause:3.2", true, []string{"/pause"}, nil},
		{"localhost:5000/busybox:1", true, nil, []string{"sh"}},
		{"docker.io/polinux/stress:latest", true, nil, []string{"/usr/local/bin/stress"}},
		{"registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2", true, []string{"/sample-apiserver"}, nil},
		{"registry.k8s.io/metrics-server/metrics-server:v0.8.0", true, []string{"/metrics-server"}, nil},
		{"docker.io/bitnami/nginx:1.27", false, nil, []string{"mkube-app"}},
		{"quay.io/acme/app:1", false, nil, []string{"mkube-app"}},
	}
	for _, tc := range tests {
		img := Lookup(tc.ref)
		if img.Known != tc.known || !slices.Equal(img.Entrypoint, tc.entrypoint) || !slices.Equal(img.Cmd, tc.cmd) {
			t.Errorf("%s: known %v entrypoint %q cmd %q; want %v %q %q", tc.ref, img.Known, img.Entrypoint, img.Cmd, tc.known, tc.entrypoint, tc.cmd)
		}
	}
	// Each Lookup has its own maps: a caller may change them.
	Lookup("nginx").Files["/etc/nginx/nginx.conf"] = "changed"
	if Lookup("nginx").Files["/etc/nginx/nginx.conf"] == "changed" {
		t.Error("Lookups share their Files")
	}
	if names := Names(); !sort.StringsAreSorted(names) || !slices.Contains(names, "nginx") || !slices.Contains(names, "polinux/stress") {
		t.Errorf("Names() = %q", names)
	}
}

func TestPullError(t *testing.T) {
	tests := []struct {
		ref, want string
		notFound  bool
	}{
		{ref: "docker.io/library/nginx:1.25"},
		{ref: "docker.io/library/nginx@sha256:0a399eb16751829e1af26fea27b20c3ec28d7ab1fb72182879dcae1cca21206a"},
		{ref: "docker.io/library/nginx:doesnotexist", notFound: true,
			want: `failed to pull and unpack image "docker.io/library/nginx:doesnotexist": failed to resolve reference "docker.io/library/nginx:doesnotexist": docker.io/library/nginx:doesnotexist: not found`},
		{ref: "docker.io/library/foo:non-existent", notFound: true, // the DaemonSet rollback conformance spec's
			want: `failed to pull and unpack image "docker.io/library/foo:non-existent": failed to resolve reference "docker.io/library/foo:non-existent": docker.io/library/foo:non-existent: not found`},
		{ref: "gcr.io/google_samples/gb-redisslave:nonexistent", notFound: true,
			want: `failed to pull and unpack image "gcr.io/google_samples/gb-redisslave:nonexistent": failed to resolve reference "gcr.io/google_samples/gb-redisslave:nonexistent": gcr.io/google_samples/gb-redisslave:nonexistent: not found`},
		{ref: "webserver:404", notFound: true,
			want: `failed to pull and unpack image "webserver:404": failed to resolve reference "webserver:404": webserver:404: not found`},
		{ref: "invalid.registry.k8s.io/invalid/alpine:3.1",
			want: `failed to pull and unpack image "invalid.registry.k8s.io/invalid/alpine:3.1": failed to resolve reference "invalid.registry.k8s.io/invalid/alpine:3.1": failed to do request: Head "https://invalid.registry.k8s.io/v2/invalid/alpine/manifests/3.1": dial tcp: lookup invalid.registry.k8s.io: no such host`},
		{ref: "x.invalid/app:1",
			want: `failed to pull and unpack image "x.invalid/app:1": failed to resolve reference "x.invalid/app:1": failed to do request: Head "https://x.invalid/v2/app/manifests/1": dial tcp: lookup x.invalid: no such host`},
		{ref: "registry.invalid:5000/team/app:latest",
			want: `failed to pull and unpack image "registry.invalid:5000/team/app:latest": failed to resolve reference "registry.invalid:5000/team/app:latest": failed to do request: Head "https://registry.invalid:5000/v2/team/app/manifests/latest": dial tcp: lookup registry.invalid: no such host`},
	}
	for _, tc := range tests {
		err := PullError(tc.ref)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want || errors.Is(err, ErrNotFound) != tc.notFound {
			t.Errorf("PullError(%q) = %q, want %q (not found: %v)", tc.ref, got, tc.want, tc.notFound)
		}
	}
}
