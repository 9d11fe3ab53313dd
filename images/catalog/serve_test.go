package catalog

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/images/shell"
)

// tcpConn gives one end of a net.Pipe the addresses of a node's
// connection to a pod, which servers log.
type tcpConn struct {
	net.Conn
	local, remote net.Addr
}

func (c tcpConn) LocalAddr() net.Addr  { return c.local }
func (c tcpConn) RemoteAddr() net.Addr { return c.remote }

// dial connects to the image's server on port in c's container, as the
// runtime does for a connection from the bridge, 10.244.0.1.
func dial(c *container, ref string, argv []string, port int32) net.Conn {
	img := Lookup(ref)
	node, pod := net.Pipe()
	src := &net.TCPAddr{IP: net.IPv4(10, 244, 0, 1), Port: 40000}
	dst := &net.TCPAddr{IP: net.IPv4(10, 244, 0, 5), Port: int(port)}
	go img.Serve(Running{Process: c.p, Argv: argv, Env: []string{"PATH=" + stdPath}, Started: epoch}, port, tcpConn{pod, dst, src})
	return tcpConn{node, src, dst}
}

// do sends one request to the image's server and reads the answer.
func do(t *testing.T, c *container, ref string, argv []string, port int32, method, target string) (*http.Response, string) {
	t.Helper()
	conn := dial(c, ref, argv, port)
	defer conn.Close()
	req, err := http.NewRequest(method, "http://10.244.0.5"+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestWebServersServeTheirFilesAndPages(t *testing.T) {
	nginx := []string{"/docker-entrypoint.sh", "nginx", "-g", "daemon off;"}
	httpd := []string{"httpd-foreground"}
	tests := []struct {
		name, ref      string
		argv           []string
		setup          func(fs *shell.FS)
		method, target string
		code           int
		body           string // "" is not checked
		header         map[string]string
		log            string // the access log line on stdout
	}{
		{name: "nginx serves its index for /", ref: "nginx", argv: nginx, method: "GET", target: "/", code: 200,
			header: map[string]string{"Server": "nginx/1.27.3", "Content-Type": "text/html", "Content-Length": "615",
				"Date": "Tue, 01 Dec 2026 11:00:00 GMT"},
			log: `10.244.0.1 - - [01/Dec/2026:11:00:00 +0000] "GET / HTTP/1.1" 200 615 "-" "kube-probe/1.37" "-"`},
		{name: "nginx's 404 is its own page", ref: "nginx", argv: nginx, method: "GET", target: "/healthz", code: 404,
			body: "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n" +
				"<hr><center>nginx/1.27.3</center>\r\n</body>\r\n</html>\r\n",
			log: `10.244.0.1 - - [01/Dec/2026:11:00:00 +0000] "GET /healthz HTTP/1.1" 404 153 "-" "kube-probe/1.37" "-"`},
		{name: "nginx answers HEAD with the headers only", ref: "nginx", argv: nginx, method: "HEAD", target: "/index.html", code: 200,
			body: "", header: map[string]string{"Content-Length": "615"},
			log: `"HEAD /index.html HTTP/1.1" 200 0 "-"`},
		{name: "nginx refuses POST to a file", ref: "nginx", argv: nginx, method: "POST", target: "/", code: 405,
			body: "<html>\r\n<head><title>405 Not Allowed</title></head>\r\n<body>\r\n<center><h1>405 Not Allowed</h1></center>\r\n" +
				"<hr><center>nginx/1.27.3</center>\r\n</body>\r\n</html>\r\n"},
		{name: "nginx redirects a directory to its slash", ref: "nginx", argv: nginx, method: "GET", target: "/docs",
			setup: func(fs *shell.FS) { fs.WriteFile("/usr/share/nginx/html/docs/index.html", []byte("docs\n")) },
			code:  301, header: map[string]string{"Location": "http://10.244.0.5/docs/"}},
		{name: "nginx lists no directory without an index", ref: "nginx", argv: nginx, method: "GET", target: "/empty/",
			setup: func(fs *shell.FS) { fs.Mkdir("/usr/share/nginx/html/empty", true) }, code: 403},
		{name: "nginx serves the root a ConfigMap's default.conf names", ref: "nginx", argv: nginx, method: "GET", target: "/",
			setup: func(fs *shell.FS) {
				fs.WriteFile("/etc/nginx/conf.d/default.conf", []byte("server {\n    listen 80;\n    location / {\n        root /srv/www;\n    }\n}\n"))
				fs.WriteFile("/srv/www/index.html", []byte("<h1>from a ConfigMap</h1>\n"))
			},
			code: 200, body: "<h1>from a ConfigMap</h1>\n"},
		{name: "httpd serves It works!", ref: "httpd", argv: httpd, method: "GET", target: "/", code: 200,
			body:   "<html><body><h1>It works!</h1></body></html>\n",
			header: map[string]string{"Server": "Apache/2.4.62 (Unix)", "Content-Type": "text/html"},
			log:    `10.244.0.1 - - [01/Dec/2026:11:00:00 +0000] "GET / HTTP/1.1" 200 45`},
		{name: "httpd's 404 is Apache's page", ref: "httpd", argv: httpd, method: "GET", target: "/nope", code: 404,
			body: "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n" +
				"<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n</body></html>\n",
			header: map[string]string{"Content-Type": "text/html; charset=iso-8859-1"},
			log:    `10.244.0.1 - - [01/Dec/2026:11:00:00 +0000] "GET /nope HTTP/1.1" 404 196`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := start(t, tc.ref, tc.argv, nil, 0)
			waitUntil(t, "listening on 80", func() bool { return c.p.Listening(80) })
			if tc.setup != nil {
				tc.setup(c.p.FS)
			}
			resp, body := do(t, c, tc.ref, tc.argv, 80, tc.method, tc.target)
			if resp.StatusCode != tc.code || (tc.body != "" || tc.method == "HEAD") && body != tc.body {
				t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.target, resp.StatusCode, body, tc.code, tc.body)
			}
			for k, v := range tc.header {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if tc.log != "" {
				waitUntil(t, "the access log line", func() bool { return strings.Contains(c.stdout.String(), tc.log) })
			}
		})
	}
}

func TestAgnhostNetexecAnswersItsEndpoints(t *testing.T) {
	argv := []string{"/agnhost", "netexec", "--http-port=8080"}
	c := start(t, "registry.k8s.io/e2e-test-images/agnhost:2.40", argv, nil, 0)
	waitUntil(t, "listening on 8080", func() bool { return c.p.Listening(8080) })
	ref := "registry.k8s.io/e2e-test-images/agnhost:2.40"
	tests := []struct {
		target string
		code   int
		body   string
	}{
		{"/hostname", 200, "web-0"},
		{"/echo?msg=hello", 200, "hello"},
		{"/echo?msg=teapot&code=418", 418, "teapot"},
		{"/clientip", 200, "10.244.0.1:40000"},
		{"/healthz", 200, ""},
		{"/shell?cmd=echo%20hi", 200, `{"output":"hi\n"}`},
		{"/shell?cmd=exit%203", 200, `{"error":"exit status 3"}`},
		{"/", 200, "NOW: 2026-12-01 11:00:00 +0000 UTC"},
	}
	for _, tc := range tests {
		resp, body := do(t, c, ref, argv, 8080, "GET", tc.target)
		if resp.StatusCode != tc.code || body != tc.body {
			t.Errorf("GET %s = %d %q, want %d %q", tc.target, resp.StatusCode, body, tc.code, tc.body)
		}
	}
	waitUntil(t, "the request log", func() bool {
		return strings.Contains(c.stderr.String(), "2026/12/01 11:00:00 GET /hostname\n") &&
			strings.Contains(c.stderr.String(), "GET /shell?cmd=echo hi\n")
	})

	// Without its UDP server, netexec is never ready.
	noUDP := []string{"/agnhost", "netexec", "--udp-port=-1"}
	if resp, _ := do(t, c, ref, noUDP, 8080, "GET", "/healthz"); resp.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("/healthz without UDP = %d, want 412", resp.StatusCode)
	}
}

func TestAgnhostLivenessIsHealthyForTenSeconds(t *testing.T) {
	argv := []string{"/agnhost", "liveness"}
	ref := "registry.k8s.io/e2e-test-images/agnhost:2.40"
	c := start(t, ref, argv, nil, 0)
	waitUntil(t, "listening on 8080", func() bool { return c.p.Listening(8080) })
	for _, step := range []struct {
		after time.Duration
		code  int
		body  string
	}{
		{0, 200, "ok"},
		{10 * time.Second, 200, "ok"},
		{10*time.Second + 1, 500, "error: 10.000000001"},
		{42 * time.Second, 500, "error: 42"},
	} {
		c.clk.SetTime(epoch.Add(step.after))
		if resp, body := do(t, c, ref, argv, 8080, "GET", "/healthz"); resp.StatusCode != step.code || body != step.body {
			t.Errorf("after %v: %d %q, want %d %q", step.after, resp.StatusCode, body, step.code, step.body)
		}
	}
	if resp, body := do(t, c, ref, argv, 8080, "GET", "/started"); resp.StatusCode != 200 || body != "42s" {
		t.Errorf("/started = %d %q", resp.StatusCode, body)
	}
	// The subcommand is found inside a shell's command line too.
	if resp, _ := do(t, c, ref, []string{"sh", "-c", "exec /agnhost liveness"}, 8080, "GET", "/healthz"); resp.StatusCode != 500 {
		t.Errorf("sh -c agnhost liveness: %d, want liveness's 500", resp.StatusCode)
	}
	if out := c.stdout.String() + c.stderr.String(); out != "" {
		t.Errorf("agnhost liveness printed %q; the real one prints nothing", out)
	}
}

func TestOtherServers(t *testing.T) {
	t.Run("goproxy refuses non-proxy requests", func(t *testing.T) {
		c := start(t, "registry.k8s.io/goproxy:0.1", nil, nil, 0)
		resp, body := do(t, c, "registry.k8s.io/goproxy:0.1", nil, 8080, "GET", "/")
		if resp.StatusCode != 500 || body != "This is a proxy server. Does not respond to non-proxy requests.\n" {
			t.Errorf("GET / = %d %q", resp.StatusCode, body)
		}
	})
	t.Run("an unknown image answers 200 on every path", func(t *testing.T) {
		c := start(t, "quay.io/acme/shop:2", nil, nil, 0)
		resp, body := do(t, c, "quay.io/acme/shop:2", nil, 3000, "GET", "/api/health")
		if resp.StatusCode != 200 || !strings.Contains(body, `image "quay.io/acme/shop:2" is not in mkube's catalog`) {
			t.Errorf("GET /api/health = %d %q", resp.StatusCode, body)
		}
	})
	t.Run("redis answers PING, inline and in RESP", func(t *testing.T) {
		c := start(t, "redis", nil, nil, 0)
		conn := dial(c, "redis", nil, 6379)
		go io.WriteString(conn, "PING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n*1\r\n$3\r\nGET\r\nQUIT\r\n")
		got, _ := io.ReadAll(conn)
		want := "+PONG\r\n$2\r\nhi\r\n-ERR mkube's simulated redis answers only PING, ECHO and QUIT, not 'GET'\r\n+OK\r\n"
		if string(got) != want {
			t.Errorf("redis answered %q, want %q", got, want)
		}
	})
	t.Run("postgres accepts and waits for its startup message", func(t *testing.T) {
		c := start(t, "postgres", nil, []string{"POSTGRES_PASSWORD=x"}, 0)
		conn := dial(c, "postgres", nil, 5432)
		conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if n, err := conn.Read(make([]byte, 1)); n != 0 || !isTimeout(err) {
			t.Errorf("postgres said something first: %d %v", n, err)
		}
		conn.Close()
	})
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// agnhost test-webserver serves the container's files; serve-hostname
// answers with the pod's hostname, whatever the path.
func TestAgnhostTestWebserverAndServeHostname(t *testing.T) {
	ref := "registry.k8s.io/e2e-test-images/agnhost:2.40"
	web := []string{"/agnhost", "test-webserver"}
	c := start(t, ref, web, nil, 0)
	waitUntil(t, "listening on 80", func() bool { return c.p.Listening(80) })
	c.p.FS.WriteFile("/srv/hello.txt", []byte("hello\n"))
	for _, tc := range []struct {
		target string
		code   int
		body   string
	}{
		{"/srv/hello.txt", 200, "hello\n"},
		{"/nothing", 404, "404 page not found\n"},
		{"/srv", 301, ""},
	} {
		resp, body := do(t, c, ref, web, 80, "GET", tc.target)
		if resp.StatusCode != tc.code || (tc.body != "" && body != tc.body) {
			t.Errorf("GET %s = %d %q, want %d %q", tc.target, resp.StatusCode, body, tc.code, tc.body)
		}
	}
	if resp, body := do(t, c, ref, web, 80, "GET", "/srv/"); resp.StatusCode != 200 || !strings.Contains(body, `<a href="hello.txt">hello.txt</a>`) {
		t.Errorf("the listing of /srv/: %d %q", resp.StatusCode, body)
	}

	hostname := []string{"/agnhost", "serve-hostname"}
	h := start(t, ref, hostname, nil, 0)
	waitUntil(t, "listening on 9376", func() bool { return h.p.Listening(9376) })
	if resp, body := do(t, h, ref, hostname, 9376, "GET", "/anything"); resp.StatusCode != 200 || body != "web-0" {
		t.Errorf("serve-hostname: %d %q", resp.StatusCode, body)
	}
}

// kubectl's update demo reads each pod's data.json through pods/proxy to
// see which of its two images the pod runs.
func TestTheUpdateDemoImagesNameThemselvesInDataJSON(t *testing.T) {
	for _, animal := range []string{"kitten", "nautilus"} {
		ref := "registry.k8s.io/e2e-test-images/" + animal + ":1.7"
		img := Lookup(ref)
		argv := append(append([]string{}, img.Entrypoint...), img.Cmd...) // the image's own command
		c := start(t, ref, argv, nil, 0)
		waitUntil(t, "listening on 80", func() bool { return c.p.Listening(80) })
		resp, body := do(t, c, ref, argv, 80, "GET", "/data.json")
		if want := `"image": "` + animal + `.jpg"`; resp.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: GET /data.json = %d %q, want %s", animal, resp.StatusCode, body, want)
		}
	}
}
