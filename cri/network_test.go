package cri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/network/podnetwork"
	"github.com/mkube/mkube/proto/runtimev1"
)

// podIP is the IP the runtime gave the sandbox.
func (h *harness) podIP(t *testing.T, podID string) string {
	t.Helper()
	resp, err := h.rt.PodSandboxStatus(h.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: podID})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status.Network.Ip
}

// httpClient is an HTTP client whose connections are the runtime's
// DialPod, as the kubelet's prober dials through the pod network.
func (h *harness) httpClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(addr)
			var n int32
			fmt.Sscan(port, &n)
			return h.srv.net.DialPod(ctx, host, n)
		}}}
}

// get GETs url through the pod network, once the server listens.
func (h *harness) get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	var resp *http.Response
	waitFor(t, "the server to listen", func() bool {
		var err error
		resp, err = h.httpClient().Get(url)
		if err != nil && !strings.Contains(err.Error(), runtimev1.ConnectionRefused) {
			t.Fatalf("GET %s: %v", url, err)
		}
		return err == nil
	})
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// runImage runs a pod with one started container of image and args.
func (h *harness) runImage(t *testing.T, pod, image string, args ...string) (podID, id string) {
	t.Helper()
	podID = h.runPod(t, pod)
	h.pull(t, image)
	cfg := containerConfig("app", image)
	cfg.Args = args
	id = h.create(t, podID, cfg)
	h.start(t, id)
	return podID, id
}

// logOf is the container's log file as the runtime wrote it.
func (h *harness) logOf(t *testing.T, pod string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(h.podConfig(pod).LogDirectory, "app", "0.log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestNginxServesItsFilesThroughThePodNetwork(t *testing.T) {
	h := newHarness(t, Options{})
	podID, id := h.runImage(t, "web", "nginx:1.27")
	ip := h.podIP(t, podID)

	resp, body := h.get(t, "http://"+ip+"/")
	if resp.StatusCode != 200 || len(body) != 615 || !strings.Contains(body, "<title>Welcome to nginx!</title>") {
		t.Errorf("GET / = %d, %d bytes:\n%s", resp.StatusCode, len(body), body)
	}
	if got := resp.Header.Get("Server"); got != "nginx/1.27.3" {
		t.Errorf("Server header %q", got)
	}
	if got := resp.Header.Get("Content-Type"); got != "text/html" {
		t.Errorf("Content-Type %q", got)
	}
	if got, want := resp.Header.Get("Date"), t0.Format(http.TimeFormat); got != want {
		t.Errorf("Date %q, want the runtime clock's %q", got, want)
	}

	resp, body = h.get(t, "http://"+ip+"/healthz")
	want404 := "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n" +
		"<hr><center>nginx/1.27.3</center>\r\n</body>\r\n</html>\r\n"
	if resp.StatusCode != 404 || body != want404 {
		t.Errorf("GET /healthz = %d %q, want nginx's 404 page", resp.StatusCode, body)
	}

	// A file that `kubectl exec` writes is served by the next request.
	if _, err := h.rt.ExecSync(h.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id,
		Cmd: []string{"sh", "-c", "echo ready > /usr/share/nginx/html/ready.txt"}}); err != nil {
		t.Fatal(err)
	}
	if resp, body = h.get(t, "http://"+ip+"/ready.txt"); resp.StatusCode != 200 || body != "ready\n" ||
		resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("GET /ready.txt = %d %q (%s)", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}

	// Each request is a line of nginx's access log on stdout, from the
	// bridge's address, which is where a node's probes come from.
	waitFor(t, "the access log", func() bool { return strings.Contains(h.logOf(t, "web"), "ready.txt") })
	log := h.logOf(t, "web")
	for _, line := range []string{
		`stdout F 10.88.0.1 - - [03/Aug/2026:10:15:42 +0000] "GET / HTTP/1.1" 200 615 "-" "Go-http-client/1.1" "-"`,
		`stdout F 10.88.0.1 - - [03/Aug/2026:10:15:42 +0000] "GET /healthz HTTP/1.1" 404 153 "-" "Go-http-client/1.1" "-"`,
		`"GET /ready.txt HTTP/1.1" 200 6 "-"`,
	} {
		if !strings.Contains(log, line) {
			t.Errorf("the log lacks %q:\n%s", line, log)
		}
	}
}

func TestAnIPNoSandboxHasIsNoRouteToHostAfterARPGivesUp(t *testing.T) {
	h := newHarness(t, Options{}) // no containers: the dial is the clock's only waiter
	errc := make(chan error, 1)
	go func() {
		_, err := h.srv.net.DialPod(h.ctx, "10.88.0.99", 80)
		errc <- err
	}()
	waitFor(t, "the dial to wait for ARP", h.clock.HasWaiters)
	h.clock.Step(podnetwork.ARPTimeout - time.Millisecond)
	select {
	case err := <-errc:
		t.Fatalf("failed before ARP gave up: %v", err)
	default:
	}
	h.clock.Step(time.Millisecond)
	if st := status.Convert(<-errc); st.Code() != codes.Unavailable || st.Message() != "connect: no route to host" {
		t.Errorf("an IP nobody has: %v, want Unavailable %q", st.Err(), runtimev1.NoRouteToHost)
	}
	// ... unless the caller's deadline comes first.
	ctx, cancel := context.WithTimeout(h.ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := h.srv.net.DialPod(ctx, "10.88.0.99", 80); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("with a short deadline: %v, want DeadlineExceeded", err)
	}
}

func TestAPortNothingListensOnIsRefused(t *testing.T) {
	h := newHarness(t, Options{})
	podID, _ := h.runImage(t, "web", "nginx:1.27")
	ip := h.podIP(t, podID)
	h.get(t, "http://"+ip+"/") // nginx listens on 80

	_, err := h.srv.net.DialPod(h.ctx, ip, 8080)
	if st := status.Convert(err); st.Code() != codes.Unavailable || st.Message() != "connect: connection refused" {
		t.Errorf("a port nothing listens on: %v, want Unavailable %q", err, runtimev1.ConnectionRefused)
	}

	// A stopped sandbox has given its IP back: no route to it.
	if _, err := h.rt.StopPodSandbox(h.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: podID}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(h.ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := h.srv.net.DialPod(ctx, ip, 80); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("a stopped pod's IP: %v, want the wait for ARP", err)
	}
}

func TestAgnhostLivenessFailsAfterTenSeconds(t *testing.T) {
	h := newHarness(t, Options{})
	podID, _ := h.runImage(t, "liveness-http", "registry.k8s.io/e2e-test-images/agnhost:2.40", "liveness")
	url := "http://" + h.podIP(t, podID) + ":8080/healthz"
	if resp, body := h.get(t, url); resp.StatusCode != 200 || body != "ok" {
		t.Errorf("at start: %d %q, want 200 ok", resp.StatusCode, body)
	}
	h.clock.Step(10 * time.Second)
	if resp, body := h.get(t, url); resp.StatusCode != 200 || body != "ok" {
		t.Errorf("after 10 s: %d %q, want 200 ok still", resp.StatusCode, body)
	}
	h.clock.Step(1500 * time.Millisecond)
	if resp, body := h.get(t, url); resp.StatusCode != 500 || body != "error: 11.5" {
		t.Errorf("after 11.5 s: %d %q, want 500 %q", resp.StatusCode, body, "error: 11.5")
	}
	if log := h.logOf(t, "liveness-http"); log != "" {
		t.Errorf("agnhost liveness logs nothing, as the real one; got:\n%s", log)
	}
}

// The Dial call itself: the frames the kubelet exchanges with the
// runtime for one HTTP/1.1 exchange over a half-closed connection.
func TestDialCarriesAHalfClosedExchange(t *testing.T) {
	h := newHarness(t, Options{})
	podID, _ := h.runImage(t, "web", "httpd:2.4")
	ip := h.podIP(t, podID)
	h.get(t, "http://"+ip+"/")

	stream, err := runtimev1.NewPodNetworkClient(h.conn).Dial(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := "GET / HTTP/1.1\r\nHost: " + ip + "\r\nUser-Agent: kube-probe/1.37\r\n\r\n"
	if err := stream.Send(&runtimev1.DialFrame{Address: &runtimev1.Address{Ip: ip, Port: 80}, Data: []byte(req)}); err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil || first.GetAddress().GetIp() != "10.88.0.1" || first.GetAddress().GetPort() < 32768 {
		t.Fatalf("first frame %v (%v), want the source address 10.88.0.1:<ephemeral>", first, err)
	}
	if err := stream.CloseSend(); err != nil { // the FIN: the server still answers
		t.Fatal(err)
	}
	var got strings.Builder
	for {
		f, err := stream.Recv()
		if err != nil {
			t.Fatalf("stream ended (%v) before close_write, after %q", err, got.String())
		}
		got.Write(f.GetData())
		if f.GetCloseWrite() {
			break
		}
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("after close_write: %v, want the call to end", err)
	}
	resp := got.String()
	for _, want := range []string{"HTTP/1.1 200 OK\r\n", "Server: Apache/2.4.62 (Unix)\r\n", "Content-Length: 45\r\n",
		"\r\n\r\n<html><body><h1>It works!</h1></body></html>\n"} {
		if !strings.Contains(resp, want) {
			t.Errorf("response lacks %q:\n%s", want, resp)
		}
	}
	waitFor(t, "the access log", func() bool { return strings.Count(h.logOf(t, "web"), `"GET / HTTP/1.1"`) == 2 })
	if want := `stdout F 10.88.0.1 - - [03/Aug/2026:10:15:42 +0000] "GET / HTTP/1.1" 200 45`; !strings.Contains(h.logOf(t, "web"), want) {
		t.Errorf("log lacks Apache's common-format line %q:\n%s", want, h.logOf(t, "web"))
	}

	// A refused dial fails the call with the errno's text.
	stream, err = runtimev1.NewPodNetworkClient(h.conn).Dial(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	stream.Send(&runtimev1.DialFrame{Address: &runtimev1.Address{Ip: ip, Port: 443}})
	if _, err := stream.Recv(); status.Convert(err).Message() != runtimev1.ConnectionRefused {
		t.Errorf("dial to a closed port: %v", err)
	}
}

func TestAContainerThatExitsDropsItsConnections(t *testing.T) {
	h := newHarness(t, Options{})
	podID, id := h.runImage(t, "cache", "redis:7")
	ip := h.podIP(t, podID)
	var conn net.Conn
	waitFor(t, "redis to listen", func() bool {
		var err error
		conn, err = h.srv.net.DialPod(h.ctx, ip, 6379)
		return err == nil
	})
	defer conn.Close()
	io.WriteString(conn, "*1\r\n$4\r\nPING\r\n")
	buf := make([]byte, 64)
	if n, err := conn.Read(buf); err != nil || string(buf[:n]) != "+PONG\r\n" {
		t.Fatalf("PING: %q %v", buf[:n], err)
	}
	if _, err := h.rt.StopContainer(h.ctx, &runtimeapi.StopContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Read(buf); !errors.Is(err, io.EOF) {
		t.Errorf("read after the container exited: %q %v, want EOF", buf[:n], err)
	}
	if _, err := h.srv.net.DialPod(h.ctx, ip, 6379); status.Convert(err).Message() != runtimev1.ConnectionRefused {
		t.Errorf("dial after the container exited: %v, want refused", err)
	}
}

func TestThePodNetworkAndTakeProbeFailureWorkWhileTheRuntimeIsFrozen(t *testing.T) {
	h := newFaultsHarness(t)
	podID, id := h.runContainer(t, "web", "nginx")
	ip := h.podIP(t, podID)
	h.get(t, "http://"+ip+"/")
	if _, err := h.faults.FailProbes(h.ctx, &runtimev1.FailProbesRequest{ContainerId: id, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.faults.Freeze(h.ctx, &runtimev1.FreezeRequest{Frozen: true}); err != nil {
		t.Fatal(err)
	}
	defer h.faults.Freeze(h.ctx, &runtimev1.FreezeRequest{Frozen: false})

	var fails []bool
	for range 2 {
		resp, err := h.faults.TakeProbeFailure(h.ctx, &runtimev1.TakeProbeFailureRequest{ContainerId: id})
		if err != nil {
			t.Fatal(err)
		}
		fails = append(fails, resp.Fail)
	}
	if fails[0] != true || fails[1] != false {
		t.Errorf("TakeProbeFailure after FailProbes(1): %v, want [true false]", fails)
	}
	if _, err := h.faults.TakeProbeFailure(h.ctx, &runtimev1.TakeProbeFailureRequest{ContainerId: "nosuch"}); status.Code(err) != codes.NotFound {
		t.Errorf("TakeProbeFailure of an unknown container: %v, want NotFound", err)
	}

	// Through the gRPC service, not DialPod: a hung runtime's network still answers.
	stream, err := runtimev1.NewPodNetworkClient(h.conn).Dial(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	stream.Send(&runtimev1.DialFrame{Address: &runtimev1.Address{Ip: ip, Port: 80}})
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	go func() { <-ctx.Done(); stream.CloseSend() }()
	if f, err := stream.Recv(); err != nil || f.GetAddress() == nil {
		t.Errorf("Dial while frozen: %v %v, want connected", f, err)
	}
}

func TestDialPodFromLocalhostIsWhatThePodLogs(t *testing.T) {
	h := newHarness(t, Options{})
	podID, _ := h.runImage(t, "web", "nginx:1.27")
	ip := h.podIP(t, podID)
	h.get(t, "http://"+ip+"/") // nginx listens
	conn, err := h.srv.net.DialPodFrom(h.ctx, netip.MustParseAddr("127.0.0.1"), ip, 80)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /from-port-forward HTTP/1.1\r\nHost: localhost:8080\r\nConnection: close\r\n\r\n")
	io.Copy(io.Discard, conn)
	waitFor(t, "the access log", func() bool {
		return strings.Contains(h.logOf(t, "web"), `127.0.0.1 - - [03/Aug/2026:10:15:42 +0000] "GET /from-port-forward HTTP/1.1" 404`)
	})
}
