package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/cri"
	"github.com/mkube/mkube/internal/testserver"
)

// networkRuntime is an in-process runtime on a fake clock, as the
// kubelet's, with a way to run one-container pods on it.
type networkRuntime struct {
	*runtimeService
	clock *clocktesting.FakeClock
}

func newNetworkRuntime(t *testing.T) networkRuntime {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC))
	rs, err := connectRuntime(context.Background(), "", cri.Options{PodCIDR: netip.MustParsePrefix("10.244.0.0/24"), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.close)
	return networkRuntime{rs, clk}
}

// run starts a pod with one container of image, and returns the pod's IP
// and the container's ID.
func (r networkRuntime) run(t *testing.T, pod, image string, cfg *runtimeapi.ContainerConfig) (ip, id string) {
	t.Helper()
	ctx := context.Background()
	sb, err := r.runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: pod, Namespace: "default", Uid: "uid-" + pod}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}}); err != nil {
		t.Fatal(err)
	}
	cfg.Metadata, cfg.Image = &runtimeapi.ContainerMetadata{Name: "app"}, &runtimeapi.ImageSpec{Image: image}
	c, err := r.runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Fatal(err)
	}
	st, err := r.runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId})
	if err != nil {
		t.Fatal(err)
	}
	return st.Status.Network.Ip, c.ContainerId
}

// waitListening waits until the container's server accepts on port.
func (r networkRuntime) waitListening(t *testing.T, ip string, port int) {
	t.Helper()
	testserver.EventuallyWithin(t, 10*time.Second, ip+":"+strconv.Itoa(port)+" accepts", func() (bool, string) {
		conn, err := r.dialPod(context.Background(), ip, port)
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		return true, ""
	})
}

// client is an HTTP client over the pod network, as the prober's.
func (r networkRuntime) client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(port)
			if err != nil {
				return nil, err
			}
			return r.dialPod(ctx, host, n)
		}}}
}

func (r networkRuntime) get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := r.client(5 * time.Second).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func TestAnHTTPClientOverDialPodGetsNginxsIndex(t *testing.T) {
	r := newNetworkRuntime(t)
	ip, _ := r.run(t, "web", "nginx:1.27", &runtimeapi.ContainerConfig{})
	r.waitListening(t, ip, 80)
	code, body := r.get(t, "http://"+ip+"/")
	if code != 200 || len(body) != 615 || !strings.Contains(body, "<h1>Welcome to nginx!</h1>") {
		t.Errorf("GET / = %d, %d bytes:\n%s", code, len(body), body)
	}
	if code, _ := r.get(t, "http://"+ip+"/nosuch"); code != 404 {
		t.Errorf("GET /nosuch = %d, want 404", code)
	}
}

func TestAgnhostLivenessFlipsTo500AfterTenSecondsOfTheRuntimesClock(t *testing.T) {
	r := newNetworkRuntime(t)
	ip, _ := r.run(t, "liveness-http", "registry.k8s.io/e2e-test-images/agnhost:2.40",
		&runtimeapi.ContainerConfig{Args: []string{"liveness"}})
	r.waitListening(t, ip, 8080)
	url := "http://" + ip + ":8080/healthz"
	if code, body := r.get(t, url); code != 200 || body != "ok" {
		t.Errorf("at start: %d %q, want 200 ok", code, body)
	}
	r.clock.Step(10*time.Second + 250*time.Millisecond)
	if code, body := r.get(t, url); code != 500 || body != "error: 10.25" {
		t.Errorf("after 10.25 s: %d %q, want 500 %q", code, body, "error: 10.25")
	}
}

func TestDialPodErrorsAreGosOwn(t *testing.T) {
	r := newNetworkRuntime(t)
	ip, _ := r.run(t, "web", "nginx:1.27", &runtimeapi.ContainerConfig{})
	r.waitListening(t, ip, 80)

	_, err := r.dialPod(context.Background(), ip, 8080)
	if want := "dial tcp " + ip + ":8080: connect: connection refused"; err == nil || err.Error() != want {
		t.Errorf("a closed port: %v, want %q", err, want)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("%v is not ECONNREFUSED", err)
	}

	// No pod has the IP: the runtime waits for ARP, 3 s of its clock;
	// a dial timeout of 50 ms (real time) comes first.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = r.dialPod(ctx, "10.244.0.99", 80)
	var netErr net.Error
	if err == nil || err.Error() != "dial tcp 10.244.0.99:80: i/o timeout" || !errors.As(err, &netErr) || !netErr.Timeout() ||
		!errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("an IP no pod has, with a short timeout: %v, want Go's i/o timeout", err)
	}
	// Without one, ARP gives up: no route to host.
	errc := make(chan error, 1)
	go func() {
		_, err := r.dialPod(context.Background(), "10.244.0.98", 80)
		errc <- err
	}()
	testserver.EventuallyWithin(t, 10*time.Second, "the runtime's wait for ARP to end", func() (bool, string) {
		r.clock.Step(time.Second)
		select {
		case err = <-errc:
			return true, ""
		default:
			return false, "dialing"
		}
	})
	if want := "dial tcp 10.244.0.98:80: connect: no route to host"; err == nil || err.Error() != want || !errors.Is(err, syscall.EHOSTUNREACH) {
		t.Errorf("an IP no pod has: %v, want %q", err, want)
	}
}

func TestAPodConnHonoursDeadlinesAndHalfClose(t *testing.T) {
	r := newNetworkRuntime(t)
	ip, _ := r.run(t, "cache", "redis:7", &runtimeapi.ContainerConfig{})
	r.waitListening(t, ip, 6379)
	conn, err := r.dialPod(context.Background(), ip, 6379)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if local := conn.LocalAddr().String(); !strings.HasPrefix(local, "10.244.0.1:") {
		t.Errorf("local address %s, want the bridge's 10.244.0.1", local)
	}

	// Nothing to read: the read deadline ends the Read.
	conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err = conn.Read(make([]byte, 1))
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) ||
		!strings.HasPrefix(err.Error(), "read tcp 10.244.0.1:") || !strings.HasSuffix(err.Error(), "->"+ip+":6379: i/o timeout") {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	conn.SetReadDeadline(time.Time{})

	// A command, then our FIN: redis answers, then closes too.
	if _, err := io.WriteString(conn, "PING\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := conn.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(conn)
	if string(got) != "+PONG\r\n" || err != nil {
		t.Errorf("after CloseWrite: %q %v, want +PONG then EOF", got, err)
	}
	if _, err := io.WriteString(conn, "PING\r\n"); err == nil || !strings.HasSuffix(err.Error(), "write: broken pipe") {
		t.Errorf("write after CloseWrite: %v, want broken pipe", err)
	}
	conn.Close()
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read after Close: %v, want net.ErrClosed", err)
	}
}

func TestAnHTTPClientTimeoutEndsAnUnansweredRequest(t *testing.T) {
	r := newNetworkRuntime(t)
	ip, _ := r.run(t, "db", "postgres:17", &runtimeapi.ContainerConfig{
		Envs: []*runtimeapi.KeyValue{{Key: "POSTGRES_PASSWORD", Value: []byte("secret")}}})
	r.waitListening(t, ip, 5432)
	// postgres accepts and waits for its startup message: an HTTP GET is
	// never answered, and the client's Timeout ends it.
	_, err := r.client(50 * time.Millisecond).Get("http://" + ip + ":5432/")
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() || !strings.Contains(err.Error(), "Client.Timeout exceeded") {
		t.Errorf("GET of a server that never answers: %v, want the client's timeout", err)
	}
}

func TestProbeFailureTakesTheInjectedFailures(t *testing.T) {
	r := newNetworkRuntime(t)
	_, id := r.run(t, "web", "nginx:1.27", &runtimeapi.ContainerConfig{})
	ctx := context.Background()
	if r.probeFailure(ctx, id) {
		t.Error("a probe failed with no fault injected")
	}
	if err := r.failProbes(ctx, id, 2); err != nil { // as `mkube fail-probes` does, through the kubelet
		t.Fatal(err)
	}
	got := []bool{r.probeFailure(ctx, r.containerID(id)), r.probeFailure(ctx, id), r.probeFailure(ctx, id)}
	if !got[0] || !got[1] || got[2] {
		t.Errorf("probes after fail-probes 2: %v, want [true true false]", got)
	}
	if r.probeFailure(ctx, "nosuch") {
		t.Error("an unknown container's probe was to fail")
	}
}

// A connection costs goroutines while it is open (the kubelet's
// receiver, the runtime's pumps and server) and none once closed: a node
// of idle pods costs nothing in the pod network.
func TestClosedConnectionsLeaveNoGoroutinesBehind(t *testing.T) {
	r := newNetworkRuntime(t)
	ip, _ := r.run(t, "web", "nginx:1.27", &runtimeapi.ContainerConfig{})
	r.waitListening(t, ip, 80)
	r.get(t, "http://"+ip+"/") // gRPC's own goroutines for the connection start now
	base := runtime.NumGoroutine()
	for range 50 {
		r.get(t, "http://"+ip+"/")
		conn, err := r.dialPod(context.Background(), ip, 80) // a tcpSocket probe: connect, close
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
	testserver.EventuallyWithin(t, 10*time.Second, "the connections' goroutines to end", func() (bool, string) {
		n := runtime.NumGoroutine()
		return n <= base, fmt.Sprintf("%d goroutines, %d before", n, base)
	})
}
