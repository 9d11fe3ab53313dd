package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/proto/runtimev1"
)

// Faults for teaching (`mkube crash`, `mkube oom`, ...) travel as
// `kubectl logs` does: the CLI cannot reach the runtime's socket, so it
// asks the API server, whose nodes/proxy subresource forwards to this
// kubelet's API, which calls the runtime's Faults service (package cri,
// proto/runtime.proto):
//
//	POST /mkube/faults/<namespace>/<pod>/<container>/crash?exitCode=N
//	POST /mkube/faults/<namespace>/<pod>/<container>/oom
//	POST /mkube/faults/<namespace>/<pod>/<container>/fail-probes?count=N
//	GET  /mkube/faults/<namespace>/<pod>/<container>/process
//	POST /mkube/faults/freeze?frozen=true|false
//
// A fault is aimed at the container's current instance, the one whose
// exit the kubelet then reports and restarts per the restartPolicy.

// faultCallTimeout bounds each call to the runtime: a frozen runtime
// does not answer CRI calls (finding the container is one), and the
// caller should hear so rather than wait for ever.
const faultCallTimeout = 10 * time.Second

// faultTarget finds the current instance of the container the path
// names, or answers the error and returns nil: 404 for an unknown pod or
// container, 409 for one that has no instance yet.
func (s *Server) faultTarget(ctx context.Context, w http.ResponseWriter, r *http.Request) *kubecontainer.Container {
	ns, podName, name := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	pod, ok := s.host.Pod(ns + "/" + podName)
	if !ok {
		http.Error(w, fmt.Sprintf("pod %s/%s not found on node %s", ns, podName, s.nodeName), http.StatusNotFound)
		return nil
	}
	if !hasContainer(pod, name) {
		http.Error(w, fmt.Sprintf("container %q not found in pod %s/%s", name, ns, podName), http.StatusNotFound)
		return nil
	}
	ctr, err := s.container(ctx, pod, name)
	if err != nil {
		writeRuntimeError(w, fmt.Sprintf("container %q in pod %s/%s", name, ns, podName), err)
		return nil
	}
	if ctr == nil {
		http.Error(w, fmt.Sprintf("container %q in pod %s/%s is waiting to start: ContainerCreating", name, ns, podName), http.StatusConflict)
		return nil
	}
	return ctr
}

func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.Name == name {
			return true
		}
	}
	return false
}

// runningTarget is faultTarget for the faults that end a process: the
// instance must be running (409 otherwise).
func (s *Server) runningTarget(ctx context.Context, w http.ResponseWriter, r *http.Request) *kubecontainer.Container {
	ctr := s.faultTarget(ctx, w, r)
	if ctr != nil && ctr.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		http.Error(w, fmt.Sprintf("container %q in pod %s/%s is not running", ctr.Name, r.PathValue("namespace"), r.PathValue("pod")), http.StatusConflict)
		return nil
	}
	return ctr
}

func (s *Server) serveCrash(w http.ResponseWriter, r *http.Request) {
	code, err := intQuery(r, "exitCode", 1)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), faultCallTimeout)
	defer cancel()
	ctr := s.runningTarget(ctx, w, r)
	if ctr == nil {
		return
	}
	if _, err := s.host.Faults().Crash(ctx, &runtimev1.CrashRequest{ContainerId: ctr.RawID, ExitCode: int32(code)}); err != nil {
		writeRuntimeError(w, "crash", err)
		return
	}
	fmt.Fprintf(w, "container %s exited with code %d\n", ctr.Name, code)
}

func (s *Server) serveOOMKill(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), faultCallTimeout)
	defer cancel()
	ctr := s.runningTarget(ctx, w, r)
	if ctr == nil {
		return
	}
	if _, err := s.host.Faults().OOMKill(ctx, &runtimev1.OOMKillRequest{ContainerId: ctr.RawID}); err != nil {
		writeRuntimeError(w, "OOM kill", err)
		return
	}
	fmt.Fprintf(w, "container %s was OOM-killed\n", ctr.Name)
}

func (s *Server) serveFailProbes(w http.ResponseWriter, r *http.Request) {
	count, err := intQuery(r, "count", 1)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), faultCallTimeout)
	defer cancel()
	ctr := s.faultTarget(ctx, w, r)
	if ctr == nil {
		return
	}
	if err := s.host.FailProbes(ctx, ctr.RawID, int32(count)); err != nil {
		writeRuntimeError(w, "fail probes", err)
		return
	}
	fmt.Fprintf(w, "the next %d probes of container %s will fail\n", count, ctr.Name)
}

// serveInspectProcess answers the runtime's InspectProcessResponse as
// JSON (protojson: the .proto is the schema, field names lowerCamelCase).
func (s *Server) serveInspectProcess(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), faultCallTimeout)
	defer cancel()
	ctr := s.faultTarget(ctx, w, r)
	if ctr == nil {
		return
	}
	resp, err := s.host.Faults().InspectProcess(ctx, &runtimev1.InspectProcessRequest{ContainerId: ctr.RawID})
	if err != nil {
		writeRuntimeError(w, "inspect process", err)
		return
	}
	data, err := protojson.Marshal(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// serveFreeze freezes or thaws the node's runtime. It needs no CRI call,
// so it answers while the runtime is frozen.
func (s *Server) serveFreeze(w http.ResponseWriter, r *http.Request) {
	frozen, err := strconv.ParseBool(r.URL.Query().Get("frozen"))
	if err != nil {
		http.Error(w, "frozen must be true or false", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), faultCallTimeout)
	defer cancel()
	if _, err := s.host.Faults().Freeze(ctx, &runtimev1.FreezeRequest{Frozen: frozen}); err != nil {
		writeRuntimeError(w, "freeze", err)
		return
	}
	if frozen {
		fmt.Fprintf(w, "the container runtime of node %s is frozen\n", s.nodeName)
	} else {
		fmt.Fprintf(w, "the container runtime of node %s is thawed\n", s.nodeName)
	}
}

// intQuery reads an integer query parameter, def if it is absent.
func intQuery(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s must be an integer, not %q", name, v)
	}
	return int(n), nil
}

// writeRuntimeError answers a failed runtime call with the HTTP status
// its gRPC code stands for.
func writeRuntimeError(w http.ResponseWriter, what string, err error) {
	code, msg := http.StatusInternalServerError, status.Convert(err).Message()
	switch status.Code(err) {
	case codes.NotFound:
		code = http.StatusNotFound
	case codes.FailedPrecondition:
		code = http.StatusConflict
	case codes.InvalidArgument:
		code = http.StatusBadRequest
	case codes.DeadlineExceeded, codes.Unavailable:
		code = http.StatusServiceUnavailable
		msg = "the container runtime is not answering (is it frozen?): " + msg
	}
	http.Error(w, what+": "+msg, code)
}
