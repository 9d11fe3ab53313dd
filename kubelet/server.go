package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's own HTTP API, on the port it reports in
// node.status.daemonEndpoints: `kubectl logs` asks the API server, which
// asks the kubelet of the pod's node at
//
//	GET /containerLogs/<namespace>/<pod>/<container>?follow=&tailLines=&previous=&timestamps=
//
// the path a real kubelet serves. (Real kubelets serve it over TLS with
// authentication; this one is plain HTTP, like the rest of mkube.)

// serve answers until ctx ends.
func (k *Kubelet) serve(ctx context.Context, ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", k.serveContainerLogs)
	// mkube's fault injection for teaching, through the runtime (faults.go).
	mux.HandleFunc("POST /mkube/faults/{namespace}/{pod}/{container}/crash", k.serveCrash)
	mux.HandleFunc("POST /mkube/faults/{namespace}/{pod}/{container}/oom", k.serveOOMKill)
	mux.HandleFunc("POST /mkube/faults/{namespace}/{pod}/{container}/fail-probes", k.serveFailProbes)
	mux.HandleFunc("GET /mkube/faults/{namespace}/{pod}/{container}/process", k.serveInspectProcess)
	mux.HandleFunc("POST /mkube/faults/freeze", k.serveFreeze)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
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
	ctr, err := k.container(r.Context(), pod, name)
	if err != nil {
		http.Error(w, fmt.Sprintf("container %q in pod %q: %v", name, podName, err), http.StatusInternalServerError)
		return
	}
	if ctr == nil {
		http.Error(w, fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", name, podName), http.StatusBadRequest)
		return
	}
	q := r.URL.Query()
	if q.Get("previous") == "true" {
		if ctr.Previous == nil {
			http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", name, podName), http.StatusBadRequest)
			return
		}
		ctr = ctr.Previous
	}
	opts := logOptions{tail: -1, follow: q.Get("follow") == "true", timestamps: q.Get("timestamps") == "true"}
	if v := q.Get("tailLines"); v != "" {
		opts.tail, _ = strconv.Atoi(v)
	}
	w.Header().Set("Content-Type", "text/plain")
	if err := k.writeContainerLog(r.Context(), w, ctr, opts); err != nil {
		k.log.Debug("container log", "pod", ns+"/"+podName, "container", name, "err", err)
	}
}
