package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	kubeletmetrics "github.com/mkube/mkube/kubelet/metrics"
	kubetypes "github.com/mkube/mkube/kubelet/types"
	"github.com/mkube/mkube/proto/runtimev1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// The kubelet's own HTTP API, on the port it reports in
// node.status.daemonEndpoints: `kubectl logs` asks the API server, which
// asks the kubelet of the pod's node at
//
//	GET /containerLogs/<namespace>/<pod>/<container>?follow=&tailLines=&previous=&timestamps=&sinceSeconds=&sinceTime=&limitBytes=
//
// the path a real kubelet serves, and /exec, /attach and /portForward
// (exec.go) for the streams of kubectl exec, attach and port-forward.
// Every request is authenticated and authorized as a real kubelet's
// (auth.go), over HTTPS (tls.go).

// Host is what the server asks of the kubelet.
type Host interface {
	// Pod is the pod named key ("namespace/name") bound to one of the
	// process's nodes, from its informer.
	Pod(key string) (*corev1.Pod, bool)
	// PodSandbox is what the runtime has for the pod with uid, nil if
	// it has no sandbox for it.
	PodSandbox(ctx context.Context, uid types.UID) (*kubecontainer.PodSandbox, error)
	Runtime() runtimeapi.RuntimeServiceClient
	Faults() runtimev1.FaultsClient
	// FailProbes makes the container's next count probes fail, through
	// the runtime, and remembers to ask it before they run.
	FailProbes(ctx context.Context, id string, count int32) error
	// Nodes are the process's nodes, in order.
	Nodes() []string
	// NodeEndpoint is node's handler of path (/stats/summary,
	// /metrics/resource, ...: stats.go), nil if node is not one of the
	// process's.
	NodeEndpoint(node, path string) http.Handler
}

// Server is the kubelet's HTTP API, shared by a process's nodes: a pod's
// logs are found by the pod, whatever its node.
type Server struct {
	host     Host
	nodeName string // the process's first node, named in "not found" answers
	clock    clock.Clock
	log      *slog.Logger
	// extra are handlers the kubelet adds by pattern (the pod network's
	// route, podnetwork_route.go of package kubelet).
	extra map[string]http.HandlerFunc
	auth  Auth        // who may use the port (auth.go); Open unless UseAuth
	tls   *tls.Config // the port's TLS (tls.go); nil serves plain HTTP
}

// New returns the server of host; nodeName names the node in answers.
func New(host Host, nodeName string, clk clock.Clock, log *slog.Logger) *Server {
	return &Server{host: host, nodeName: nodeName, clock: clk, log: log, extra: map[string]http.HandlerFunc{}, auth: Open}
}

// UseAuth has the port authenticate and authorize as a says, before Serve.
func (s *Server) UseAuth(a Auth) { s.auth = a }

// UseTLS has the port speak HTTPS with cfg (Serving.TLSConfig), before
// Serve. A kubelet always does; a server without it speaks plain HTTP,
// for in-process tests that do not care.
func (s *Server) UseTLS(cfg *tls.Config) { s.tls = cfg }

// HandleFunc adds a handler for pattern, before Serve.
func (s *Server) HandleFunc(pattern string, h http.HandlerFunc) { s.extra[pattern] = h }

// container returns the runtime's newest instance of the pod's container
// name, or nil.
func (s *Server) container(ctx context.Context, pod *corev1.Pod, name string) (*kubecontainer.Container, error) {
	sb, err := s.host.PodSandbox(ctx, kubetypes.RuntimeUID(pod))
	if sb == nil || err != nil {
		return nil, err
	}
	return sb.Containers[name], nil
}

// Serve answers on ln until ctx ends: it blocks.
func (s *Server) Serve(ctx context.Context, ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.serveContainerLogs)
	// exec, attach and port-forward: SPDY upgrades are POSTs, WebSocket's GETs (exec.go).
	for _, method := range []string{"GET ", "POST "} {
		mux.HandleFunc(method+"/exec/{namespace}/{pod}/{container}", s.serveExec)
		mux.HandleFunc(method+"/exec/{namespace}/{pod}/{uid}/{container}", s.serveExec)
		mux.HandleFunc(method+"/attach/{namespace}/{pod}/{container}", s.serveAttach)
		mux.HandleFunc(method+"/attach/{namespace}/{pod}/{uid}/{container}", s.serveAttach)
		mux.HandleFunc(method+"/portForward/{namespace}/{pod}", s.servePortForward)
		mux.HandleFunc(method+"/portForward/{namespace}/{pod}/{uid}", s.servePortForward)
	}
	// mkube's fault injection for teaching, through the runtime (faults.go).
	mux.HandleFunc("POST /mkube/faults/{namespace}/{pod}/{container}/crash", s.serveCrash)
	mux.HandleFunc("POST /mkube/faults/{namespace}/{pod}/{container}/oom", s.serveOOMKill)
	mux.HandleFunc("POST /mkube/faults/{namespace}/{pod}/{container}/fail-probes", s.serveFailProbes)
	mux.HandleFunc("GET /mkube/faults/{namespace}/{pod}/{container}/process", s.serveInspectProcess)
	mux.HandleFunc("POST /mkube/faults/freeze", s.serveFreeze)
	s.handleNodeEndpoints(mux, kubeletmetrics.Paths) // stats.go
	for pattern, h := range s.extra {
		mux.HandleFunc(pattern, h)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	// Go's profiles, as the kubelet's debugging handlers serve them
	// (enableDebuggingHandlers, on by default): what a fleet spends its CPU on.
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	srv := &http.Server{Handler: s.withAuth(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Error("kubelet API server stopped", "err", err)
	}
}

func (s *Server) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	ns, podName, name := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	pod, ok := s.host.Pod(ns + "/" + podName)
	if !ok {
		http.Error(w, fmt.Sprintf("pod %s/%s not found on node %s", ns, podName, s.nodeName), http.StatusNotFound)
		return
	}
	cur, err := s.container(r.Context(), pod, name)
	if err != nil {
		http.Error(w, fmt.Sprintf("container %q in pod %q: %v", name, podName, err), http.StatusInternalServerError)
		return
	}
	q := r.URL.Query()
	id, msg := logContainerID(pod, name, q.Get("previous") == "true")
	ctr := cur.Instance(id)
	if ctr == nil && id == "" && msg == "" && cur != nil {
		ctr = cur // not reported yet: the newest instance
	}
	if ctr == nil {
		if msg == "" {
			msg = fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", name, podName)
		}
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	opts := logOptions{tail: -1, follow: q.Get("follow") == "true", timestamps: q.Get("timestamps") == "true"}
	if v := q.Get("tailLines"); v != "" {
		opts.tail, _ = strconv.Atoi(v)
	}
	if v := q.Get("limitBytes"); v != "" {
		opts.limitBytes, _ = strconv.ParseInt(v, 10, 64)
	}
	if v, err := strconv.ParseInt(q.Get("sinceSeconds"), 10, 64); err == nil && v > 0 {
		opts.since = s.clock.Now().Add(-time.Duration(v) * time.Second)
	} else if t, err := time.Parse(time.RFC3339, q.Get("sinceTime")); err == nil {
		opts.since = t
	}
	w.Header().Set("Content-Type", "text/plain")
	if err := s.writeContainerLog(r.Context(), w, ctr, opts); err != nil {
		s.log.Debug("container log", "pod", ns+"/"+podName, "container", name, "err", err)
	}
}

// logContainerID is which instance of container name `kubectl logs`
// reads, by the pod's status, as the kubelet's validateContainerLogStatus
// decides: with previous, the last one that terminated; else the running
// one, or the terminated one, or, while it waits to restart
// (CrashLoopBackOff), the one that terminated last — so that during a
// crash loop `logs` and `logs --previous` both show the run that just
// died. msg says why there is none.
func logContainerID(pod *corev1.Pod, name string, previous bool) (id, msg string) {
	st := kubetypes.ReportedStatus(pod, name)
	if st == nil {
		return "", ""
	}
	last := st.LastTerminationState.Terminated
	switch {
	case previous && last != nil && last.ContainerID != "":
		return last.ContainerID, ""
	case previous:
		return "", fmt.Sprintf("previous terminated container %q in pod %q not found", name, pod.Name)
	case st.State.Running != nil || st.State.Terminated != nil:
		return st.ContainerID, ""
	case last != nil && last.ContainerID != "":
		return last.ContainerID, ""
	case st.State.Waiting != nil:
		return "", fmt.Sprintf("container %q in pod %q is waiting to start: %s", name, pod.Name, st.State.Waiting.Reason)
	}
	return "", ""
}
