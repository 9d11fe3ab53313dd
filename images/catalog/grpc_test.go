package catalog

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/images/lib"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// grpcClient is a gRPC client of the image's server on port in c's
// container, made as the kubelet's grpc probe makes one, its dialer a
// connection to the pod: each dial is a net.Pipe whose pod end the
// image's Serve answers. podEnds gets each pod end, served a value
// each time a Serve returns.
type grpcClient struct {
	*grpc.ClientConn
	dial    func(context.Context, string) (net.Conn, error)
	podEnds chan net.Conn
	served  chan struct{}
}

func grpcDial(t *testing.T, c *container, ref string, argv []string, port int32) *grpcClient {
	t.Helper()
	img := Lookup(ref)
	g := &grpcClient{podEnds: make(chan net.Conn, 16), served: make(chan struct{}, 16)}
	g.dial = func(context.Context, string) (net.Conn, error) {
		node, pod := net.Pipe()
		src := &net.TCPAddr{IP: net.IPv4(10, 244, 0, 1), Port: 40000}
		dst := &net.TCPAddr{IP: net.IPv4(10, 244, 0, 5), Port: int(port)}
		g.podEnds <- pod
		go func() {
			img.Serve(Running{Process: c.p, Argv: argv, Started: epoch}, port, tcpConn{pod, dst, src})
			g.served <- struct{}{}
		}()
		return tcpConn{node, src, dst}, nil
	}
	conn, err := grpc.NewClient("passthrough:///10.244.0.5:"+strconv.Itoa(int(port)),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(g.dial))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	g.ClientConn = conn
	return g
}

// check calls Check for service: its status, or its error's code and message.
func (g *grpcClient) check(t *testing.T, service string) (healthpb.HealthCheckResponse_ServingStatus, codes.Code, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(g).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	st, _ := status.FromError(err)
	return resp.GetStatus(), st.Code(), st.Message()
}

// waitServed waits for a Serve to return: its server is gone.
func (g *grpcClient) waitServed(t *testing.T, what string) {
	t.Helper()
	select {
	case <-g.served:
	case <-time.After(5 * time.Second):
		t.Fatalf("the server did not stop when %s", what)
	}
}

// The docs' gRPC liveness example: etcd serves the Health service on
// its client port, SERVING, and HTTP/1.1's /health there too.
func TestEtcdServesTheHealthServiceOnItsClientPort(t *testing.T) {
	const ref = "registry.k8s.io/etcd:3.5.1-0"
	argv := []string{"/usr/local/bin/etcd", "--data-dir", "/var/lib/etcd", "--listen-client-urls", "http://0.0.0.0:2379",
		"--advertise-client-urls", "http://127.0.0.1:2379", "--log-level", "debug"}
	c := start(t, ref, argv, nil, 0)
	waitUntil(t, "listening on 2379 and 2380", func() bool { return c.p.Listening(2379) && c.p.Listening(2380) })

	g := grpcDial(t, c, ref, argv, 2379)
	for _, tc := range []struct {
		name, service string
		status        healthpb.HealthCheckResponse_ServingStatus
		code          codes.Code
		message       string
	}{
		{"the server as a whole is SERVING", "", healthpb.HealthCheckResponse_SERVING, codes.OK, ""},
		{"a service it does not have is NotFound", "etcdserverpb.KV", healthpb.HealthCheckResponse_UNKNOWN, codes.NotFound, "unknown service"},
	} {
		if st, code, msg := g.check(t, tc.service); st != tc.status || code != tc.code || msg != tc.message {
			t.Errorf("%s: Check(%q) = %v, %v %q; want %v, %v %q", tc.name, tc.service, st, code, msg, tc.status, tc.code, tc.message)
		}
	}
	if resp, body := do(t, c, ref, argv, 2379, "GET", "/health"); resp.StatusCode != 200 || body != `{"health":"true","reason":""}` {
		t.Errorf("GET /health over HTTP/1.1 = %d %q", resp.StatusCode, body)
	}
	if ok, _ := c.p.FS.Stat("/var/lib/etcd/member/snap/db"); !ok {
		t.Error("etcd made no member directory under --data-dir")
	}

	c.p.Terminate()
	if r := <-c.done; r.code != 0 || r.err != nil {
		t.Errorf("etcd on SIGTERM: exit %d, %v; want 0 (PID 1's os.Exit(0))", r.code, r.err)
	}
	for _, want := range []string{
		`{"level":"info","ts":"2026-12-01T11:00:00.000Z","caller":"etcdmain/etcd.go:73","msg":"Running: ","args":["/usr/local/bin/etcd","--data-dir","/var/lib/etcd",`,
		`{"level":"info","ts":"2026-12-01T11:00:00.000Z","logger":"raft","caller":"etcdserver/zap_raft.go:77","msg":"8e9e05c52164694d became leader at term 2"}`,
		`"msg":"published local member to cluster through raft","local-member-id":"8e9e05c52164694d","local-member-attributes":"{Name:default ClientURLs:[http://127.0.0.1:2379]}"`,
		`{"level":"info","ts":"2026-12-01T11:00:00.000Z","caller":"embed/serve.go:98","msg":"ready to serve client requests"}`,
		`"msg":"serving client traffic insecurely; this is strongly discouraged!","address":"[::]:2379"}`,
		`"msg":"received signal; shutting down","signal":"terminated"}`,
		`"msg":"closed etcd server","name":"default","data-dir":"/var/lib/etcd","advertise-peer-urls":["http://localhost:2380"],"advertise-client-urls":["http://127.0.0.1:2379"]}`,
	} {
		if !strings.Contains(c.stderr.String(), want) {
			t.Errorf("etcd's log lacks %s\n%s", want, c.stderr.String())
		}
	}
}

// A gRPC server lives as long as its connection: it stops when the
// client hangs up (a probe done) and when the runtime closes the pod's
// end (the container exited), and a client that only connects, as a
// tcpSocket probe does, ends its serving too.
func TestAGRPCServerStopsWithItsConnection(t *testing.T) {
	const ref = "registry.k8s.io/etcd:3.5.1-0"
	argv := []string{"etcd", "--listen-client-urls", "http://0.0.0.0:2379"}
	c := start(t, ref, argv, nil, 0)
	waitUntil(t, "listening on 2379", func() bool { return c.p.Listening(2379) })

	g := grpcDial(t, c, ref, argv, 2379)
	if st, _, msg := g.check(t, ""); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check = %v %s", st, msg)
	}
	(<-g.podEnds).Close() // the runtime's close of a connection to an exited container
	g.waitServed(t, "the runtime closed the pod's end")

	g = grpcDial(t, c, ref, argv, 2379)
	if st, _, msg := g.check(t, ""); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check = %v %s", st, msg)
	}
	g.Close()
	g.waitServed(t, "the client hung up")

	conn, _ := g.dial(context.Background(), "")
	conn.Close()
	g.waitServed(t, "a client connected and hung up without a word")
}

// agnhost grpc-health-checking is SERVING until /make-not-serving, or
// until its --delay-unhealthy-sec have passed.
func TestAgnhostGRPCHealthCheckingFlipsOnRequest(t *testing.T) {
	const ref = "registry.k8s.io/e2e-test-images/agnhost:2.40"
	type step struct {
		name    string
		after   time.Duration // on the container's clock, since it started
		get     string        // a control endpoint to GET first, if any
		service string
		status  healthpb.HealthCheckResponse_ServingStatus
		code    codes.Code
	}
	tests := []struct {
		name  string
		argv  []string
		steps []step
	}{
		{name: "by default it is SERVING until told otherwise", argv: []string{"/agnhost", "grpc-health-checking"}, steps: []step{
			{name: "at start", status: healthpb.HealthCheckResponse_SERVING},
			{name: "an hour on", after: time.Hour, status: healthpb.HealthCheckResponse_SERVING},
			{name: "after /make-not-serving", after: time.Hour, get: "/make-not-serving", status: healthpb.HealthCheckResponse_NOT_SERVING},
			{name: "after /make-serving", after: time.Hour, get: "/make-serving", status: healthpb.HealthCheckResponse_SERVING},
			{name: "a service it was not given is NotFound", service: "other", code: codes.NotFound},
		}},
		{name: "with a delay it turns NOT_SERVING, and /make-serving does not undo that",
			argv: []string{"/agnhost", "grpc-health-checking", "--port=5001", "--http-port", "8081", "--delay-unhealthy-sec=10", "--service=liveness"},
			steps: []step{
				{name: "9 s in", after: 9 * time.Second, service: "liveness", status: healthpb.HealthCheckResponse_SERVING},
				{name: "the server as a whole is not its service", after: 9 * time.Second, code: codes.NotFound},
				{name: "10 s in", after: 10 * time.Second, service: "liveness", status: healthpb.HealthCheckResponse_NOT_SERVING},
				{name: "after /make-serving", after: 11 * time.Second, get: "/make-serving", service: "liveness", status: healthpb.HealthCheckResponse_NOT_SERVING},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			grpcPort, httpPort := int32(lib.IntFlag(tc.argv[2:], "port", 5000)), int32(lib.IntFlag(tc.argv[2:], "http-port", 8080))
			c := start(t, ref, tc.argv, nil, 0)
			waitUntil(t, "listening on both ports", func() bool { return c.p.Listening(grpcPort) && c.p.Listening(httpPort) })
			g := grpcDial(t, c, ref, tc.argv, grpcPort)
			for _, s := range tc.steps {
				c.clk.SetTime(epoch.Add(s.after))
				if s.get != "" {
					if resp, body := do(t, c, ref, tc.argv, httpPort, "GET", s.get); resp.StatusCode != 200 || body != s.after.String() {
						t.Errorf("%s: GET %s = %d %q, want 200 and how long it has run", s.name, s.get, resp.StatusCode, body)
					}
				}
				if st, code, msg := g.check(t, s.service); st != s.status || code != s.code {
					t.Errorf("%s: Check(%q) = %v, %v %q; want %v, %v", s.name, s.service, st, code, msg, s.status, s.code)
				}
			}
		})
	}

	t.Run("it logs its listeners, each Check and each mark, and exits 2 on SIGTERM", func(t *testing.T) {
		argv := []string{"/agnhost", "grpc-health-checking"}
		c := start(t, ref, argv, nil, 0)
		waitUntil(t, "listening", func() bool { return c.p.Listening(5000) && c.p.Listening(8080) })
		g := grpcDial(t, c, ref, argv, 5000)
		g.check(t, "")
		do(t, c, ref, argv, 8080, "GET", "/make-not-serving")
		if resp, _ := do(t, c, ref, argv, 8080, "GET", "/healthz"); resp.StatusCode != 404 {
			t.Errorf("GET /healthz on the control port = %d, want 404", resp.StatusCode)
		}
		c.p.Terminate()
		if r := <-c.done; r.code != agnhostExitOnSignal {
			t.Errorf("exit %d on SIGTERM, want %d", r.code, agnhostExitOnSignal)
		}
		want := "2026/12/01 11:00:00 Http server starting to listen on :8080\n" +
			"2026/12/01 11:00:00 gRPC server starting to listen on :5000\n" +
			"2026/12/01 11:00:00 Serving the Check request for health check, started at 2026-12-01 11:00:00 +0000 UTC\n" +
			"2026/12/01 11:00:00 Mark as unhealthy\n"
		if got := c.stderr.String(); got != want {
			t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
		}
	})
}
