package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/network/podnetwork/podnet"
)

// podNetwork is a container's network for the tests: 10.244.1.5:8080 is
// an HTTP server, 10.244.1.5:7 echoes, 10.244.1.6 listens on nothing, no
// pod has 10.244.9.9, and 10.244.1.7:80 never answers the SYN.
func podNetwork(t *testing.T) func(ctx context.Context, network, address string) (net.Conn, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.URL.Query().Get("msg")) })
	mux.HandleFunc("/clientip", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.Header.Get("User-Agent")) })
	mux.HandleFunc("/post", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("Content-Type"), body)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/echo?msg=here", http.StatusFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		fail := func(err error) (net.Conn, error) {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		host, _, _ := net.SplitHostPort(address)
		switch {
		case net.ParseIP(host) == nil:
			return fail(&net.DNSError{Err: "no such host", Name: host, IsNotFound: true})
		case network == "udp":
			return udpSocket(address), nil
		case address == "10.244.1.5:8080":
			return net.Dial("tcp", srv.Listener.Addr().String())
		case address == "10.244.1.5:7":
			return net.Dial("tcp", echo.Addr().String())
		case strings.HasPrefix(address, "10.244.1.7:"):
			<-ctx.Done()
			return fail(ctx.Err())
		case strings.HasPrefix(address, "10.244.9.9:"):
			return fail(os.NewSyscallError("connect", syscall.EHOSTUNREACH))
		}
		return fail(os.NewSyscallError("connect", syscall.ECONNREFUSED))
	}
}

func runNet(t *testing.T, dial func(context.Context, string, string) (net.Conn, error), script, stdin string) (stdout, stderr string, code int, fs *FS) {
	t.Helper()
	var out, errOut strings.Builder
	fs = NewFS()
	fs.Mkdir("/tmp", false)
	fs.WriteFile("/tmp/body", []byte("from a file"))
	o := Options{Clock: clocktesting.NewFakeClock(epoch), FS: fs, Stdout: &out, Stderr: &errOut, Dial: dial}
	if stdin != "" {
		o.Stdin = strings.NewReader(stdin)
	}
	code, err := New(o).Script(context.Background(), script)
	if err != nil {
		t.Fatalf("%q: %v", script, err)
	}
	return out.String(), errOut.String(), code, fs
}

// curl, wget and nc print what the real programs print, and exit with
// their codes, for the answers a pod network gives.
func TestNetworkClients(t *testing.T) {
	dial := podNetwork(t)
	for _, tc := range []struct {
		script, stdin  string
		stdout, stderr string
		code           int
	}{
		{script: `curl -s http://10.244.1.5:8080/echo?msg=poststart`, stdout: "poststart"},
		{script: `curl -g -q -s 'http://10.244.1.5:8080/echo?msg=hi' | grep -v '^\s*$'`, stdout: "hi\n"},
		{script: `curl -s 10.244.1.5:8080/clientip`, stdout: curlUserAgent},
		{script: `curl -sS -o /dev/null -w '%{http_code}\n' http://10.244.1.5:8080/nope`, stdout: "404\n"},
		{script: `curl -sSf http://10.244.1.5:8080/nope`, stderr: "curl: (22) The requested URL returned error: 404\n", code: 22},
		{script: `curl -sf http://10.244.1.5:8080/nope`, code: 22},
		{script: `curl -s -X PUT -d x=1 http://10.244.1.5:8080/post`, stdout: "PUT application/x-www-form-urlencoded x=1"},
		{script: `curl -s -d @/tmp/body -H 'Content-Type: text/plain' http://10.244.1.5:8080/post`, stdout: "POST text/plain from a file"},
		{script: `curl -s http://10.244.1.5:8080/moved`, stdout: "<a href=\"/echo?msg=here\">Found</a>.\n\n"},
		{script: `curl -sL http://10.244.1.5:8080/moved`, stdout: "here"},
		{script: `curl -s -o /tmp/out http://10.244.1.5:8080/echo?msg=saved && cat /tmp/out`, stdout: "saved"},
		{script: `curl -sI http://10.244.1.5:8080/echo | grep HTTP`, stdout: "HTTP/1.1 200 OK\r\n"},
		{script: `curl http://10.244.1.6:80/`, stderr: "curl: (7) Failed to connect to 10.244.1.6 port 80 after 0 ms: Couldn't connect to server\n", code: 7},
		{script: `curl -s http://10.244.1.6/`, code: 7},
		{script: `curl -sS http://10.244.9.9:8080/`, stderr: "curl: (7) Failed to connect to 10.244.9.9 port 8080 after 0 ms: Couldn't connect to server\n", code: 7},
		{script: `curl -sS http://web.default.svc:80/`, stderr: "curl: (6) Could not resolve host: web.default.svc\n", code: 6},
		{script: `curl -sS -w '%{http_code}' http://10.244.1.6/`, stdout: "000", stderr: "curl: (7) Failed to connect to 10.244.1.6 port 80 after 0 ms: Couldn't connect to server\n", code: 7},
		{script: `curl -sS ftp://10.244.1.5/`, stderr: "curl: (1) Protocol \"ftp\" not supported\n", code: 1},
		{script: `curl`, stderr: "curl: no URL specified\ncurl: try 'curl --help' or 'curl --manual' for more information\n", code: 2},
		{script: `curl -Z http://10.244.1.5:8080/`, stderr: "curl: option -Z: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n", code: 2},
		{script: `curl --max-time x http://10.244.1.5:8080/`, stderr: "curl: option --max-time: expected a proper numerical parameter\ncurl: try 'curl --help' or 'curl --manual' for more information\n", code: 2},

		{script: `wget -qO- http://10.244.1.5:8080/echo?msg=hi`, stdout: "hi"},
		{script: `wget -q -O - 10.244.1.5:8080/moved`, stdout: "here"},
		{script: `wget -O- http://10.244.1.5:8080/echo?msg=hi`, stdout: "hi",
			stderr: "Connecting to 10.244.1.5:8080 (127.0.0.1:" /* the test server's */},
		{script: `wget -q http://10.244.1.5:8080/echo?msg=file && cat echo && wget -q http://10.244.1.5:8080/echo`, stdout: "file",
			stderr: "wget: can't open 'echo': File exists\n", code: 1},
		{script: `wget -q --spider http://10.244.1.5:8080/echo`},
		{script: `wget -qO- http://10.244.1.5:8080/nope`, stderr: "wget: server returned error: HTTP/1.1 404 Not Found\n", code: 1},
		{script: `wget -qO- http://10.244.1.6/`, stderr: "wget: can't connect to remote host (10.244.1.6): Connection refused\n", code: 1},
		{script: `wget -qO- http://10.244.9.9/`, stderr: "wget: can't connect to remote host (10.244.9.9): No route to host\n", code: 1},
		{script: `wget -qO- http://web/`, stderr: "wget: bad address 'web'\n", code: 1},
		{script: `wget -q --post-data 'a=b' -O- http://10.244.1.5:8080/post`, stdout: "POST application/x-www-form-urlencoded a=b"},

		{script: `nc -z 10.244.1.5 8080 && echo open`, stdout: "open\n"},
		{script: `nc -zv 10.244.1.5 7`, stderr: "10.244.1.5 (127.0.0.1:"},
		{script: `nc -z 10.244.1.6 80`, stderr: "nc: can't connect to remote host (10.244.1.6): Connection refused\n", code: 1},
		{script: `nc -z -w 1 10.244.9.9 80`, stderr: "nc: can't connect to remote host (10.244.9.9): No route to host\n", code: 1},
		{script: `nc 10.244.1.5 7`, stdin: "hello\n", stdout: "hello\n"},
		{script: `echo piped | nc 10.244.1.5 7`, stdout: "piped\n"},
		{script: `echo hostName | nc -u 10.244.1.6 8081`, code: 1},      // the port unreachable ends it
		{script: `nc -zu 10.244.9.9 53 && echo sent`, stdout: "sent\n"}, // UDP connects nothing
		{script: `nc -l 8080`, stderr: "nc: -l: only connections out are simulated (a shell's process listens on no port)\n", code: 1},
		{script: `nc 10.244.1.5`, stderr: "Usage: nc [OPTIONS] HOST PORT  - connect\n", code: 1},
	} {
		t.Run(tc.script, func(t *testing.T) {
			stdout, stderr, code, _ := runNet(t, dial, tc.script, tc.stdin)
			if stdout != tc.stdout || code != tc.code || !strings.HasPrefix(stderr, tc.stderr) || (tc.stderr == "" && stderr != "") {
				t.Fatalf("got stdout %q, stderr %q, exit %d; want %q, %q, %d", stdout, stderr, code, tc.stdout, tc.stderr, tc.code)
			}
		})
	}
}

// Without a network (no Dial), every connection fails as on a pod with
// only a loopback device.
func TestNoNetwork(t *testing.T) {
	_, stderr, code, _ := runNet(t, nil, `curl -sS http://10.244.1.5:8080/`, "")
	if code != 7 || !strings.Contains(stderr, "Couldn't connect to server") {
		t.Fatalf("got %q, exit %d", stderr, code)
	}
	// The images' programs connect through Connect too, and see connect(2)'s error.
	p := New(Options{Clock: clocktesting.NewFakeClock(epoch), FS: NewFS(), Stdout: io.Discard, Stderr: io.Discard})
	if _, err := p.Connect(context.Background(), "udp", "10.244.1.5:8081"); err == nil ||
		err.Error() != "dial udp 10.244.1.5:8081: connect: network is unreachable" || !errors.Is(err, syscall.ENETUNREACH) {
		t.Errorf("Connect without a network = %v", err)
	}
}

// Timeouts run on the process's clock: curl's --connect-timeout and
// --max-time, wget's -T and nc's -w end a connection that never
// answers, with each program's own message.
func TestNetworkTimeouts(t *testing.T) {
	dial := podNetwork(t)
	for _, tc := range []struct {
		script  string
		timeout time.Duration
		stderr  string
		code    int
	}{
		{`curl -sS --connect-timeout 1 http://10.244.1.7/`, time.Second, "curl: (28) Failed to connect to 10.244.1.7 port 80 after 1000 ms: Timeout was reached\n", 28},
		{`curl -sS -m 2.5 http://10.244.1.7/`, 2500 * time.Millisecond, "curl: (28) Failed to connect to 10.244.1.7 port 80 after 2500 ms: Timeout was reached\n", 28},
		{`wget -q -T 5 -O- http://10.244.1.7/`, 5 * time.Second, "wget: download timed out\n", 1},
		{`nc -z -w 1 10.244.1.7 80`, time.Second, "nc: can't connect to remote host (10.244.1.7): Connection timed out\n", 1},
	} {
		t.Run(tc.script, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(epoch)
			var stderr syncBuilder
			p := New(Options{Clock: clk, FS: NewFS(), Stdout: io.Discard, Stderr: &stderr, Dial: dial})
			done := make(chan int)
			go func() {
				code, err := p.Script(context.Background(), tc.script)
				if err != nil {
					t.Error(err)
				}
				done <- code
			}()
			waitUntil(t, clk.HasWaiters)
			select {
			case code := <-done:
				t.Fatalf("ended before its timeout: exit %d, %q", code, stderr.String())
			default:
			}
			clk.Step(tc.timeout - time.Millisecond)
			if !clk.HasWaiters() {
				t.Fatalf("timed out before %v", tc.timeout)
			}
			clk.Step(time.Millisecond)
			if code := <-done; code != tc.code || stderr.String() != tc.stderr {
				t.Fatalf("got %q, exit %d; want %q, %d", stderr.String(), code, tc.stderr, tc.code)
			}
		})
	}
}

// The clients' option parsers take whatever a user types: no input
// panics or hangs them (every connection is refused at once here).
func FuzzNetworkClientOptions(f *testing.F) {
	for _, s := range []string{`curl -sSfL -o /tmp/x -w '%{http_code}' http://10.244.1.6/`, `curl -m`, `curl -H`, `curl --data @/nope 10.0.0.1`,
		`wget -qO- -T 1 http://10.244.1.6/`, `wget -O`, `wget --timeout=x a`, `nc -zvw1 10.244.1.6 80`, `nc -w`, `nc host 99999`, `curl ::`} {
		f.Add(s)
	}
	refuse := func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	f.Fuzz(func(t *testing.T, script string) {
		if !strings.HasPrefix(script, "curl") && !strings.HasPrefix(script, "wget") && !strings.HasPrefix(script, "nc") {
			return
		}
		p := New(Options{Clock: &instantClock{FakeClock: clocktesting.NewFakeClock(epoch)}, FS: NewFS(), Stdout: io.Discard, Stderr: io.Discard, Dial: refuse})
		p.Script(context.Background(), script)
	})
}

// udpSocket is a UDP socket of the test's pod network: 10.244.1.5:8081
// answers "hostname" with "pod-a" (as agnhost netexec's UDP server), no
// port of 10.244.1.6 is bound, and no pod has 10.244.9.9.
func udpSocket(address string) net.Conn {
	local, remote := &net.UDPAddr{IP: net.IPv4(10, 244, 1, 2), Port: 40000}, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(address))
	var c *podnet.DatagramConn
	c = podnet.NewDatagramConn(local, remote, func(b []byte) error {
		switch {
		case address == "10.244.1.5:8081" && strings.TrimSpace(string(b)) == "hostName":
			c.Receive([]byte("pod-a"))
		case strings.HasPrefix(address, "10.244.1.6:"):
			c.Unreachable()
		}
		return nil
	}, nil)
	return c
}

// nc -u sends each read of its input as a datagram and prints the
// answers until -w's quiet time after the input ended, as
// Kubernetes' tests ask netexec's UDP server for its hostname.
func TestNetcatUDP(t *testing.T) {
	for _, tc := range []struct{ script, stdout string }{
		{`echo hostName | nc -w 1 -u 10.244.1.5 8081`, "pod-a"},
		{`echo hostName | nc -u -w 1 10.244.9.9 8081`, ""}, // lost: nothing comes back
	} {
		t.Run(tc.script, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(epoch)
			var stdout, stderr syncBuilder
			p := New(Options{Clock: clk, FS: NewFS(), Stdout: &stdout, Stderr: &stderr, Dial: podNetwork(t)})
			done := make(chan int)
			go func() {
				code, err := p.Script(context.Background(), tc.script)
				if err != nil {
					t.Error(err)
				}
				done <- code
			}()
			if tc.stdout != "" { // the answer is printed before the quiet time ends
				waitUntil(t, func() bool { return strings.Contains(stdout.String(), tc.stdout) })
			}
			// Step the clock while nc waits, until it ends: after -w's
			// second, not before.
			var stepped time.Duration
			var code int
			for ended := false; !ended; runtime.Gosched() {
				select {
				case code = <-done:
					ended = true
				default:
					if clk.HasWaiters() {
						clk.Step(100 * time.Millisecond)
						stepped += 100 * time.Millisecond
					}
				}
			}
			if stepped < time.Second {
				t.Fatalf("ended after %v, before -w's second: exit %d, %q", stepped, code, stderr.String())
			}
			if code != 0 || stdout.String() != tc.stdout || stderr.String() != "" {
				t.Fatalf("got stdout %q, stderr %q, exit %d; want %q", stdout.String(), stderr.String(), code, tc.stdout)
			}
		})
	}
}
