package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	kubetypes "github.com/mkube/mkube/kubelet/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/proxy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// `kubectl exec`, `attach` and `port-forward` reach the kubelet as the
// API server's proxied, upgraded connections, at the real kubelet's
// paths:
//
//	/exec/<namespace>/<pod>/<container>?command=sh&command=-c&command=...&input=1&output=1&error=1&tty=1
//	/attach/<namespace>/<pod>/<container>?input=1&output=1&tty=1
//	/portForward/<namespace>/<pod>
//
// (and the same with the pod's UID after its name). The kubelet does not
// run anything itself: it asks its runtime over CRI (Exec, Attach,
// PortForward) for a URL on the runtime's streaming server, and proxies
// the client's connection there, upgrade and all, as the real kubelet's
// proxyStream does. Its errors are plain text, which kubectl shows after
// "unable to upgrade connection: ".

func (s *Server) serveExec(w http.ResponseWriter, r *http.Request) {
	pod, ok := s.streamPod(w, r)
	if !ok {
		return
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmd := r.URL.Query()["command"]
	id, ok := s.runningContainer(w, r, pod)
	if !ok {
		return
	}
	resp, err := s.host.Runtime().Exec(r.Context(), &runtimeapi.ExecRequest{ContainerId: id, Cmd: cmd,
		Tty: opts.TTY, Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr})
	if err != nil {
		streaming.WriteError(err, w)
		return
	}
	s.log.Info("exec in container", "pod", pod.Namespace+"/"+pod.Name, "container", r.PathValue("container"),
		"command", strings.Join(cmd, " "), "tty", opts.TTY, "stdin", opts.Stdin)
	s.proxyStream(w, r, resp.GetUrl())
}

func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request) {
	pod, ok := s.streamPod(w, r)
	if !ok {
		return
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, ok := s.runningContainer(w, r, pod)
	if !ok {
		return
	}
	resp, err := s.host.Runtime().Attach(r.Context(), &runtimeapi.AttachRequest{ContainerId: id,
		Tty: opts.TTY, Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr})
	if err != nil {
		streaming.WriteError(err, w)
		return
	}
	s.log.Info("attach to container", "pod", pod.Namespace+"/"+pod.Name, "container", r.PathValue("container"),
		"tty", opts.TTY, "stdin", opts.Stdin)
	s.proxyStream(w, r, resp.GetUrl())
}

// servePortForward streams to the pod's sandbox. The ports come with
// each stream (SPDY) or, for WebSocket, as ?ports=80,443.
func (s *Server) servePortForward(w http.ResponseWriter, r *http.Request) {
	pod, ok := s.streamPod(w, r)
	if !ok {
		return
	}
	var ports []int32
	for _, list := range r.URL.Query()["ports"] {
		for _, p := range strings.Split(list, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
			if err != nil || n == 0 {
				http.Error(w, fmt.Sprintf("invalid port %q", p), http.StatusBadRequest)
				return
			}
			ports = append(ports, int32(n))
		}
	}
	sb, err := s.host.PodSandbox(r.Context(), kubetypes.RuntimeUID(pod))
	if err != nil || sb == nil || !sb.Ready {
		// The real kubelet's words when the runtime has no sandbox for it.
		http.Error(w, fmt.Sprintf("pod not found (%q)", pod.Name+"_"+pod.Namespace), http.StatusInternalServerError)
		return
	}
	resp, err := s.host.Runtime().PortForward(r.Context(), &runtimeapi.PortForwardRequest{PodSandboxId: sb.ID, Port: ports})
	if err != nil {
		streaming.WriteError(err, w)
		return
	}
	s.log.Info("port-forward to pod", "pod", pod.Namespace+"/"+pod.Name, "sandbox", sb.ID)
	s.proxyStream(w, r, resp.GetUrl())
}

// streamPod is the pod the path names, if this kubelet runs it, and its
// UID matches the one in the path (if any); else it answers 404.
func (s *Server) streamPod(w http.ResponseWriter, r *http.Request) (*corev1.Pod, bool) {
	pod, ok := s.host.Pod(r.PathValue("namespace") + "/" + r.PathValue("pod"))
	if !ok {
		http.Error(w, "pod does not exist", http.StatusNotFound)
		return nil, false
	}
	if uid := r.PathValue("uid"); uid != "" && uid != string(pod.UID) {
		http.Error(w, "pod does not exist", http.StatusNotFound)
		return nil, false
	}
	return pod, true
}

// runningContainer is the runtime's ID of the path's container, if it
// runs. As the real kubelet's findContainer, which looks only at running
// containers, one that is waiting or has exited is "not found": what
// kubectl shows as `unable to upgrade connection: container not found
// ("app")`.
func (s *Server) runningContainer(w http.ResponseWriter, r *http.Request, pod *corev1.Pod) (string, bool) {
	name := r.PathValue("container")
	ctr, err := s.container(r.Context(), pod, name)
	switch {
	case err != nil:
		writeRuntimeError(w, fmt.Sprintf("container %q in pod %s/%s", name, pod.Namespace, pod.Name), err)
		return "", false
	case ctr == nil || ctr.State != runtimeapi.ContainerState_CONTAINER_RUNNING:
		http.Error(w, fmt.Sprintf("container not found (%q)", name), http.StatusInternalServerError)
		return "", false
	}
	return ctr.RawID, true
}

// proxyStream hands the client's connection to the runtime's streaming
// server at rawURL: the upgrade request goes on as it came (SPDY's or
// WebSocket's headers), and once the server switches protocols the
// bytes are copied both ways until either side closes.
func (s *Server) proxyStream(w http.ResponseWriter, r *http.Request, rawURL string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		http.Error(w, fmt.Sprintf("the runtime's stream URL %q: %v", rawURL, err), http.StatusInternalServerError)
		return
	}
	handler := proxy.NewUpgradeAwareHandler(u, nil, false, true, streamResponder{s})
	handler.ServeHTTP(w, r)
}

// streamResponder answers a proxy failure (the runtime's streaming
// server cannot be reached) as a 500 with the reason.
type streamResponder struct{ s *Server }

func (s streamResponder) Error(w http.ResponseWriter, r *http.Request, err error) {
	s.s.log.Info("stream proxy failed", "path", r.URL.Path, "err", err)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}
