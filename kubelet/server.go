package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's own HTTP API, on the port it reports in
// node.status.daemonEndpoints: `kubectl logs` asks the API server, which
// asks the kubelet of the pod's node at
//
//	GET /containerLogs/<namespace>/<pod>/<container>?follow=&tailLines=&previous=&timestamps=&sinceSeconds=&sinceTime=&limitBytes=
//
// the path a real kubelet serves, and /exec, /attach and /portForward
// (exec.go) for the streams of kubectl exec, attach and port-forward.
// (Real kubelets serve it over TLS with authentication; this one is
// plain HTTP, like the rest of mkube.)

// serve answers until ctx ends.
func (k *Kubelet) serve(ctx context.Context, ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", k.serveContainerLogs)
	// exec, attach and port-forward: SPDY upgrades are POSTs, WebSocket's GETs (exec.go).
	for _, method := range []string{"GET ", "POST "} {
		mux.HandleFunc(method+"/exec/{namespace}/{pod}/{container}", k.serveExec)
		mux.HandleFunc(method+"/exec/{namespace}/{pod}/{uid}/{container}", k.serveExec)
		mux.HandleFunc(method+"/attach/{namespace}/{pod}/{container}", k.serveAttach)
		mux.HandleFunc(method+"/attach/{namespace}/{pod}/{uid}/{container}", k.serveAttach)
		mux.HandleFunc(method+"/portForward/{namespace}/{pod}", k.servePortForward)
		mux.HandleFunc(method+"/portForward/{namespace}/{pod}/{uid}", k.servePortForward)
	}
	// mkube's fault injection for teaching, through the runtime (faults.go).
	mux.HandleFunc("POST /mkube/faults/{namespace}/{pod}/{container}/crash", k.serveCrash)
	mux.HandleFunc("POST /mkube/faults/{namespace}/{pod}/{container}/oom", k.serveOOMKill)
	mux.HandleFunc("POST /mkube/faults/{namespace}/{pod}/{container}/fail-probes", k.serveFailProbes)
	mux.HandleFunc("GET /mkube/faults/{namespace}/{pod}/{container}/process", k.serveInspectProcess)
	mux.HandleFunc("POST /mkube/faults/freeze", k.serveFreeze)
	// The control plane's route to the pod network (podnetwork_route.go).
	mux.HandleFunc(podNetworkRoute+"{scheme}/{ip}/{port}/{path...}", k.servePodNetwork)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	// Go's profiles, as the kubelet's debugging handlers serve them
	// (enableDebuggingHandlers, on by default): what a fleet spends its CPU on.
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		k.log.Error("kubelet API server stopped", "err", err)
	}
}

func (k *Kubelet) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	ns, podName, name := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	obj, ok := k.informer.Cache().Get(ns + "/" + podName)
	if !ok {
		http.Error(w, fmt.Sprintf("pod %s/%s not found on node %s", ns, podName, k.cfg.NodeName), http.StatusNotFound)
		return
	}
	pod := obj.(*corev1.Pod)
	cur, err := k.container(r.Context(), pod, name)
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
		opts.since = k.clock.Now().Add(-time.Duration(v) * time.Second)
	} else if t, err := time.Parse(time.RFC3339, q.Get("sinceTime")); err == nil {
		opts.since = t
	}
	w.Header().Set("Content-Type", "text/plain")
	if err := k.writeContainerLog(r.Context(), w, ctr, opts); err != nil {
		k.log.Debug("container log", "pod", ns+"/"+podName, "container", name, "err", err)
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
	st := reportedStatus(pod, name)
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
