package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/kubelet/fakeruntime"
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
	ctr, ok := k.container(pod, name)
	if !ok {
		http.Error(w, fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", name, podName), http.StatusBadRequest)
		return
	}
	q := r.URL.Query()
	if q.Get("previous") == "true" {
		if ctr.Previous == nil {
			http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", name, podName), http.StatusBadRequest)
			return
		}
		ctr = *ctr.Previous
	}
	tail := -1
	if v := q.Get("tailLines"); v != "" {
		tail, _ = strconv.Atoi(v)
	}
	follow, timestamps := q.Get("follow") == "true", q.Get("timestamps") == "true"
	w.Header().Set("Content-Type", "text/plain")
	flusher, _ := w.(http.Flusher)
	lines, next, wait, ended := k.containerRuntime.ReadLog(ctr.ID, 0)
	if tail >= 0 && len(lines) > tail {
		lines = lines[len(lines)-tail:]
	}
	for {
		if err := writeLogLines(w, lines, timestamps); err != nil {
			return // the client went away
		}
		if !follow || ended {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-wait:
		}
		lines, next, wait, ended = k.containerRuntime.ReadLog(ctr.ID, next)
	}
}

func writeLogLines(w http.ResponseWriter, lines []fakeruntime.LogLine, timestamps bool) error {
	var b strings.Builder
	for _, l := range lines {
		if timestamps {
			b.WriteString(l.Time.UTC().Format(time.RFC3339Nano) + " ")
		}
		b.WriteString(l.Text + "\n")
	}
	_, err := w.Write([]byte(b.String()))
	return err
}
