package kubelet

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/version"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/prober"
)

// How the kubelet runs a probe (pkg/kubelet/prober/prober.go): an exec
// probe is a command in the container (CRI ExecSync), as `cat
// /tmp/healthy` sees what the container wrote; httpGet and tcpSocket
// connect to the pod's IP, here through the runtime's pod network
// (podnetwork.go), to whatever the container's image serves there.

// probeUserAgent is what the kubelet's HTTP probes say they are.
var probeUserAgent = "kube-probe/" + version.MajorMinor

// maxProbeBody is how much of an HTTP probe's answer the kubelet reads
// (Kubernetes' 10 KiB): the output a failure event shows.
const maxProbeBody = 10 << 10

// probeRunner runs probes for a kubelet.
type probeRunner struct{ k *Kubelet }

// Run runs t's probe once. A fault injected with `mkube fail-probes`
// fails it before it runs.
func (r probeRunner) Run(ctx context.Context, t prober.Target) (prober.Result, string) {
	if r.k.runtime.probeFailure(ctx, t.ID) {
		return prober.Failure, "probe failed: injected by mkube fail-probes"
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
	return prober.Unknown, "probe has no handler"
}

// exec: exit 0 is success; the output is the command's, stdout then
// stderr. A command still running at the timeout fails the probe.
func (r probeRunner) exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (prober.Result, string) {
	resp, err := r.k.runtime.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: int64(timeout / time.Second)})
	switch {
	case status.Code(err) == codes.DeadlineExceeded:
		return prober.Failure, fmt.Sprintf("command %q timed out", strings.Join(cmd, " "))
	case err != nil:
		return prober.Unknown, err.Error() // the container is going: no verdict
	}
	out := string(resp.GetStdout()) + string(resp.GetStderr())
	if resp.GetExitCode() != 0 {
		return prober.Failure, out
	}
	return prober.Success, out
}

// httpGet: a status from 200 to 399 is success (redirects are followed).
func (r probeRunner) httpGet(ctx context.Context, pod *corev1.Pod, c corev1.Container, h *corev1.HTTPGetAction, timeout time.Duration) (prober.Result, string) {
	port, err := probePort(h.Port, c)
	if err != nil {
		return prober.Failure, err.Error()
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
		return prober.Failure, err.Error()
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
	resp, err := r.k.probeClient(timeout).Do(req)
	if err != nil {
		return prober.Failure, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return prober.Success, string(body)
	}
	return prober.Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)
}

// probeClient is an HTTP client that reaches pods through the runtime's
// pod network, without keep-alives (each probe is a new connection, as
// the kubelet's are). An HTTPS probe does not verify the pod's
// certificate, as the kubelet's prober does not (InsecureSkipVerify):
// it asks whether the server answers, not who it is.
func (k *Kubelet) probeClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as Kubernetes' prober
		DialContext:     func(ctx context.Context, _, addr string) (net.Conn, error) { return k.dialPodAddr(ctx, addr) }}}
}

// dialPodAddr dials "ip:port" on the pod network.
func (k *Kubelet) dialPodAddr(ctx context.Context, addr string) (net.Conn, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, err
	}
	return k.runtime.dialPod(ctx, host, port)
}

// tcp: a connection the container accepts is success.
func (r probeRunner) tcp(ctx context.Context, pod *corev1.Pod, c corev1.Container, h *corev1.TCPSocketAction, timeout time.Duration) (prober.Result, string) {
	port, err := probePort(h.Port, c)
	if err != nil {
		return prober.Failure, err.Error()
	}
	host := h.Host
	if host == "" {
		host = pod.Status.PodIP
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := r.k.dialPodAddr(ctx, net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return prober.Failure, err.Error()
	}
	conn.Close()
	return prober.Success, ""
}

// probePort is a probe's port: a number, or the name of one of the
// container's ports.
func probePort(p intstr.IntOrString, c corev1.Container) (int, error) {
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

// onProbeRunFailed is every failed run's event (reason Unhealthy), as
// the kubelet records them, thresholds or not.
func (k *Kubelet) onProbeRunFailed(t prober.Target, output string) {
	k.recorder.Event(t.Pod, corev1.EventTypeWarning, "Unhealthy", "%s probe failed: %s", t.Kind, strings.TrimRight(output, "\n"))
}

// onProbeChange acts on a probe's new result: a failed liveness or
// startup probe kills the container, which restarts as its policy says
// (seed 003 §十); any change makes the pod's status be reported again
// (its container's ready or started).
func (k *Kubelet) onProbeChange(ctx context.Context, ch prober.Change) {
	key := client.KeyOf(ch.Pod)
	if ch.Result == prober.Failure && ch.Kind != prober.Readiness {
		k.recorder.Event(ch.Pod, corev1.EventTypeNormal, "Killing", "Container %s failed %s probe, will be restarted", ch.Container.Name, strings.ToLower(string(ch.Kind)))
		k.log.Info(string(ch.Kind)+" probe failed: killing the container", "pod", key, "container", ch.Container.Name,
			"output", strings.TrimRight(ch.Output, "\n"))
		grace := gracePeriod(ch.Pod.Spec.TerminationGracePeriodSeconds)
		if s := ch.Probe.TerminationGracePeriodSeconds; s != nil {
			grace = gracePeriod(s) // the probe's own, for a container that must go quickly
		}
		go func() { // a kill waits out the grace period: not on the prober's goroutine
			rc := &kubecontainer.Container{RawID: ch.ID, Name: ch.Container.Name, State: runtimeapi.ContainerState_CONTAINER_RUNNING}
			if err := k.killContainer(ctx, ch.Pod, ch.Container, rc, grace); err != nil && ctx.Err() == nil {
				k.log.Warn("could not kill the container its probe failed", "pod", key, "container", ch.Container.Name, "err", err)
			}
		}()
		return
	}
	k.log.Info(string(ch.Kind)+" probe: container is now "+probeOutcome(ch), "pod", key, "container", ch.Container.Name)
	k.queue.Add(key)
}

func probeOutcome(ch prober.Change) string {
	switch {
	case ch.Kind == prober.Startup:
		return "started"
	case ch.Result == prober.Success:
		return "ready"
	}
	return "not ready"
}

// syncProbes tells the prober which of pod's containers run now (after
// a sync), so that it probes their current instances.
func (k *Kubelet) syncProbes(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox) {
	running := map[string]prober.Container{}
	if sb != nil {
		for name, rc := range sb.Containers {
			if rc.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				running[name] = prober.Container{ID: rc.RawID, StartedAt: rc.StartedAt}
			}
		}
	}
	k.probes.Sync(ctx, pod, running)
}

// applyProbeResults marks sb's running containers with what their probes
// say, for the status the kubelet reports.
func (k *Kubelet) applyProbeResults(pod *corev1.Pod, sb *kubecontainer.PodSandbox) {
	if sb == nil {
		return
	}
	for _, c := range prober.Probed(pod) {
		rc := sb.Containers[c.Name]
		if rc == nil || rc.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		started, ready := k.probes.Status(pod.UID, c, rc.RawID)
		rc.NotStarted, rc.NotReady = !started, !ready
	}
}
