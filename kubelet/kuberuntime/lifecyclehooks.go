package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/version"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// Container lifecycle hooks (pkg/kubelet/lifecycle): a container's
// postStart handler runs right after the container starts, and its
// preStop handler before it is stopped (prestop.go). A handler is one of
//
//   - exec: a command in the container (CRI ExecSync), which fails if it
//     exits with a code other than 0;
//   - httpGet: a GET of the pod's IP (or the handler's host) and port,
//     through the runtime's pod network (the kubelet's podnetwork.go),
//     which fails only if no answer comes: an HTTP error status is an
//     answer;
//   - sleep: a pause of so many seconds.
//
// A postStart hook that fails has the container killed (event
// FailedPostStartHook), and the container restarts as its policy says;
// a preStop hook that fails is recorded (FailedPreStopHook) and the
// container is stopped anyway.

// hookUserAgent is what the kubelet's HTTP hooks say they are.
var hookUserAgent = "kube-lifecycle/" + version.MajorMinor

// maxHookBody is how much of an HTTP hook's answer is read before the
// connection is dropped: as much as of a probe's (package prober's
// MaxBody).
const maxHookBody = 10 << 10

// runHook runs handler h of container c, whose instance is id, in the
// pod whose IP is podIP, until it is done or ctx ends. On failure it
// returns the message of the kubelet's event with the error.
func (m *Manager) runHook(ctx context.Context, pod *corev1.Pod, c corev1.Container, id, podIP string, h *corev1.LifecycleHandler) (string, error) {
	switch {
	case h.Exec != nil:
		// No timeout of its own (the kubelet gives it none): ctx bounds it.
		var timeout int64
		if deadline, ok := ctx.Deadline(); ok {
			timeout = max(int64(time.Until(deadline).Seconds()), 1)
		}
		resp, err := m.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: h.Exec.Command, Timeout: timeout})
		var output string
		if err == nil && resp.GetExitCode() != 0 {
			output = string(resp.GetStdout()) + string(resp.GetStderr())
			err = fmt.Errorf("command '%s' exited with %d: %s", strings.Join(h.Exec.Command, " "), resp.GetExitCode(), output)
		}
		if err != nil {
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
				h.Exec.Command, c.Name, PodRef(pod), err, output), err
		}
		return "", nil
	case h.HTTPGet != nil:
		if err := m.runHTTPHook(ctx, c, podIP, h.HTTPGet); err != nil {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, c.Name, PodRef(pod), err), err
		}
		return "", nil
	case h.Sleep != nil:
		select {
		case <-ctx.Done():
			err := ctx.Err()
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v", h.Sleep.Seconds, c.Name, PodRef(pod), err), err
		case <-m.Clock.After(time.Duration(h.Sleep.Seconds) * time.Second):
			return "", nil
		}
	}
	err := fmt.Errorf("invalid handler: %v", h)
	return fmt.Sprintf("Cannot run handler: %v", err), err
}

// runHTTPHook GETs the hook's URL: the pod's IP unless the handler names
// a host, its port (a number or the name of a container port), its path
// and headers. The answer is read and dropped; whatever its status, the
// hook ran.
func (m *Manager) runHTTPHook(ctx context.Context, c corev1.Container, podIP string, h *corev1.HTTPGetAction) error {
	host := h.Host
	if host == "" {
		if host = podIP; host == "" {
			return errors.New("failed to find networking container: the pod has no IP")
		}
	}
	port, err := m.ProbePort(h.Port, c) // package prober's Port
	if err != nil {
		return err
	}
	scheme := strings.ToLower(string(h.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := h.Path
	if path != "" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), path), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", hookUserAgent)
	req.Header.Set("Accept", "*/*")
	for _, hdr := range h.HTTPHeaders {
		if strings.EqualFold(hdr.Name, "Host") {
			req.Host = hdr.Value
		} else {
			req.Header.Set(hdr.Name, hdr.Value)
		}
	}
	resp, err := m.HTTPClient().Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxHookBody))
	return resp.Body.Close()
}

// RunPostStart runs c's postStart hook, if it has one, on its instance
// id, just started in the pod whose IP is podIP (kuberuntime's
// startContainer). If the hook fails the container is killed: it exited,
// and restarts as its policy says.
func (m *Manager) RunPostStart(ctx context.Context, pod *corev1.Pod, c corev1.Container, id, podIP string) error {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return nil
	}
	key := client.KeyOf(pod)
	msg, err := m.runHook(ctx, pod, c, id, podIP, c.Lifecycle.PostStart)
	if err == nil {
		m.Log.Info("ran postStart hook", "pod", key, "container", c.Name)
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err() // the kubelet is stopping
	}
	m.Recorder.Event(pod, corev1.EventTypeWarning, "FailedPostStartHook", "%s", msg)
	m.Log.Info("postStart hook failed: killing the container", "pod", key, "container", c.Name, "err", err)
	cur := &kubecontainer.Container{Name: c.Name, RawID: id}
	return m.StopContainer(ctx, cur, GracePeriod(pod.Spec.TerminationGracePeriodSeconds))
}
