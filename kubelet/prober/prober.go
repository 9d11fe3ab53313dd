package prober

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/internal/version"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// How the kubelet runs a probe (pkg/kubelet/prober/prober.go): an exec
// probe is a command in the container (CRI ExecSync), as `cat
// /tmp/healthy` sees what the container wrote; httpGet and tcpSocket
// connect to the pod's IP, here through the runtime's pod network
// (the kubelet's podnetwork.go), to whatever the container's image
// serves there.

// probeUserAgent is what the kubelet's HTTP probes say they are.
var probeUserAgent = "kube-probe/" + version.MajorMinor

// MaxBody is how much of an HTTP probe's answer the kubelet reads
// (Kubernetes' 10 KiB): the output a failure event shows.
const MaxBody = 10 << 10

// ContainerExec runs a command in a container: the CRI runtime's ExecSync.
type ContainerExec interface {
	ExecSync(ctx context.Context, in *runtimeapi.ExecSyncRequest, opts ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error)
}

// Prober runs a node's probes (the Manager's Runner) and acts on their
// results (its OnChange and OnFailedRun, results.go). What it needs of
// the kubelet is passed in.
type Prober struct {
	// Injected reports a fault injected with `mkube fail-probes` on the
	// container with this ID (the runtime's).
	Injected func(ctx context.Context, containerID string) bool
	Runtime  ContainerExec
	// DialPod dials ip:port on the pod network (the runtime's).
	DialPod func(ctx context.Context, ip string, port int) (net.Conn, error)
	// Kill kills the container instance cur of spec, its grace period
	// the seconds given (nil: the API's default): the kubelet's preStop
	// hook, then StopContainer.
	Kill func(ctx context.Context, pod *corev1.Pod, spec corev1.Container, cur *kubecontainer.Container, grace *int64) error
	// Resync syncs the pod of key again (the node's queue).
	Resync   func(key string)
	Recorder *record.Recorder
	Log      *slog.Logger
}

// Run runs t's probe once. A fault injected with `mkube fail-probes`
// fails it before it runs.
func (r *Prober) Run(ctx context.Context, t Target) (Result, string) {
	if r.Injected(ctx, t.ID) {
		return Failure, "probe failed: injected by mkube fail-probes"
	}
	timeout := time.Duration(max(t.Probe.TimeoutSeconds, 1)) * time.Second
	switch h := t.Probe.ProbeHandler; {
	case h.Exec != nil:
		return r.exec(ctx, t.ID, h.Exec.Command, timeout)
	case h.HTTPGet != nil:
		return r.httpGet(ctx, t.Pod, t.Container, h.HTTPGet, timeout)
	case h.TCPSocket != nil:
		return r.tcp(ctx, t.Pod, t.Container, h.TCPSocket, timeout)
	case h.GRPC != nil:
		return r.grpc(ctx, t.Pod, h.GRPC, timeout)
	}
	return Unknown, "probe has no handler"
}

// exec: exit 0 is success; the output is the command's, stdout then
// stderr. A command still running at the timeout fails the probe.
func (r *Prober) exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (Result, string) {
	resp, err := r.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: int64(timeout / time.Second)})
	switch {
	case status.Code(err) == codes.DeadlineExceeded:
		return Failure, fmt.Sprintf("command %q timed out", strings.Join(cmd, " "))
	case err != nil:
		return Unknown, err.Error() // the container is going: no verdict
	}
	out := string(resp.GetStdout()) + string(resp.GetStderr())
	if resp.GetExitCode() != 0 {
		return Failure, out
	}
	return Success, out
}

// httpGet: a status from 200 to 399 is success (redirects are followed).
func (r *Prober) httpGet(ctx context.Context, pod *corev1.Pod, c corev1.Container, h *corev1.HTTPGetAction, timeout time.Duration) (Result, string) {
	port, err := Port(h.Port, c)
	if err != nil {
		return Failure, err.Error()
	}
	host := h.Host
	if host == "" {
		host = pod.Status.PodIP
	}
	scheme := strings.ToLower(string(h.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := h.Path
	if path != "" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Failure, err.Error()
	}
	req.Header.Set("User-Agent", probeUserAgent)
	req.Header.Set("Accept", "*/*")
	for _, hdr := range h.HTTPHeaders {
		if strings.EqualFold(hdr.Name, "Host") {
			req.Host = hdr.Value
		} else {
			req.Header.Set(hdr.Name, hdr.Value)
		}
	}
	resp, err := r.HTTPClient(timeout).Do(req)
	if err != nil {
		return Failure, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return Success, string(body)
	}
	return Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)
}

// HTTPClient is an HTTP client that reaches pods through the runtime's
// pod network, without keep-alives (each probe is a new connection, as
// the kubelet's are). An HTTPS probe does not verify the pod's
// certificate, as the kubelet's prober does not (InsecureSkipVerify):
// it asks whether the server answers, not who it is. The kubelet's
// httpGet lifecycle hooks use it too.
func (r *Prober) HTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as Kubernetes' prober
		DialContext:     func(ctx context.Context, _, addr string) (net.Conn, error) { return r.dialPodAddr(ctx, addr) }}}
}

// dialPodAddr dials "ip:port" on the pod network.
func (r *Prober) dialPodAddr(ctx context.Context, addr string) (net.Conn, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, err
	}
	return r.DialPod(ctx, host, port)
}

// tcp: a connection the container accepts is success.
func (r *Prober) tcp(ctx context.Context, pod *corev1.Pod, c corev1.Container, h *corev1.TCPSocketAction, timeout time.Duration) (Result, string) {
	port, err := Port(h.Port, c)
	if err != nil {
		return Failure, err.Error()
	}
	host := h.Host
	if host == "" {
		host = pod.Status.PodIP
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := r.dialPodAddr(ctx, net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return Failure, err.Error()
	}
	conn.Close()
	return Success, ""
}

// Port is a probe's (or an httpGet hook's) port: a number, or the name
// of one of the container's ports.
func Port(p intstr.IntOrString, c corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		if p.IntVal < 1 || p.IntVal > 65535 {
			return 0, fmt.Errorf("invalid port number: %d", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("couldn't find port: %v in %v", p.StrVal, c.Name)
}
