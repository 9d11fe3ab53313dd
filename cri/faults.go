package cri

import (
	"context"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
	"github.com/mkube/mkube/proto/runtimev1"
)

// Faults is mkube's own gRPC service beside CRI (proto/runtime.proto),
// served on the same socket: what CRI has no call for. It lets a learner
// look inside a container's simulated process, and break things on
// purpose to watch Kubernetes react: a crash or an OOM kill goes through
// the same exit path as a process that dies on its own, so the kubelet
// sees a CONTAINER_STOPPED event and restarts the container per the pod's
// restartPolicy; a frozen runtime is a node whose container runtime
// hangs.

// faultState is what the injected faults leave behind, with its own lock
// so that a frozen CRI call waits without holding s.mu. Its zero value is
// a healthy runtime.
type faultState struct {
	mu sync.Mutex
	// thawc is non-nil while the runtime is frozen: blocked CRI calls
	// wait on it, and Freeze(false) closes it to release them all.
	thawc chan struct{}
	// probeFailures is how many of each container's next probes fail, by
	// full container ID.
	probeFailures map[string]int32
}

// faultsServer serves the Faults service on s.
type faultsServer struct {
	runtimev1.UnimplementedFaultsServer
	s *Server
}

// Crash makes the container's process exit now with the code asked for,
// as if it had died on its own.
func (f faultsServer) Crash(_ context.Context, req *runtimev1.CrashRequest) (*runtimev1.CrashResponse, error) {
	reason := reasonError
	if req.GetExitCode() == 0 {
		reason = reasonCompleted
	}
	if err := f.s.injectExit(req.GetContainerId(), "crash", req.GetExitCode(), reason); err != nil {
		return nil, err
	}
	return &runtimev1.CrashResponse{}, nil
}

// OOMKill ends the container as the kernel's OOM killer does, with
// SIGKILL: exit code 137 and the reason OOMKilled that the kubelet
// copies into lastState.terminated.
func (f faultsServer) OOMKill(_ context.Context, req *runtimev1.OOMKillRequest) (*runtimev1.OOMKillResponse, error) {
	if err := f.s.injectExit(req.GetContainerId(), "OOM kill", exitCodeSIGKILL, reasonOOMKilled); err != nil {
		return nil, err
	}
	return &runtimev1.OOMKillResponse{}, nil
}

// injectExit ends a running container through s.exit, the path of a
// process that exits on its own, so its event reaches the kubelet.
func (s *Server) injectExit(id, fault string, code int32, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", id)
	if err != nil {
		return err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return status.Errorf(codes.FailedPrecondition, "container %q is not running", c.id)
	}
	s.exit(c, code, reason)
	s.log.Info("injected fault: "+fault, "container", c.config.GetMetadata().GetName(), "id", c.id,
		"exitCode", code, "reason", reason)
	return nil
}

// FailProbes makes the container's next count probes fail. The kubelet
// runs the probes (exec through ExecSync, httpGet and tcpSocket through
// the pod network), and its prober asks TakeProbeFailure before each
// one, whatever its kind, so the fault fails exactly the next count.
func (f faultsServer) FailProbes(_ context.Context, req *runtimev1.FailProbesRequest) (*runtimev1.FailProbesResponse, error) {
	if req.GetCount() < 0 {
		return nil, status.Error(codes.InvalidArgument, "count must not be negative")
	}
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	if err != nil {
		return nil, err
	}
	s.faults.mu.Lock() // inside s.mu, never the other way round
	if s.faults.probeFailures == nil {
		s.faults.probeFailures = map[string]int32{}
	}
	// Forget the counts of removed containers, which no probe will take.
	for id := range s.faults.probeFailures {
		if s.containers[id] == nil {
			delete(s.faults.probeFailures, id)
		}
	}
	s.faults.probeFailures[c.id] = req.GetCount()
	s.faults.mu.Unlock()
	s.log.Info("injected fault: failing probes", "container", c.config.GetMetadata().GetName(), "id", c.id,
		"count", req.GetCount())
	return &runtimev1.FailProbesResponse{}, nil
}

// TakeProbeFailure is the kubelet prober's question before each probe of
// a container: is this one to fail? A container that is gone has no
// probes to fail: NotFound, as for every call naming it.
func (f faultsServer) TakeProbeFailure(_ context.Context, req *runtimev1.TakeProbeFailureRequest) (*runtimev1.TakeProbeFailureResponse, error) {
	s := f.s
	s.mu.Lock()
	id, _, err := find(s.containers, "container", req.GetContainerId())
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &runtimev1.TakeProbeFailureResponse{Fail: s.takeProbeFailure(id)}, nil
}

// takeProbeFailure reports whether the probe about to run on the
// container with the full ID id is to fail, and counts it if so. The
// probe path calls it once per probe, before probing.
func (s *Server) takeProbeFailure(id string) bool {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if s.faults.probeFailures[id] <= 0 {
		return false
	}
	s.faults.probeFailures[id]--
	return true
}

// Freeze makes the runtime hang, or thaws it. While it is frozen every
// CRI call waits (see waitWhileFrozen): the kubelet's syncs and PLEG
// stop making progress, as on a node whose containerd is stuck, and
// already running containers go on running. The Faults service itself
// never freezes, so that Freeze(false) can get through.
func (f faultsServer) Freeze(_ context.Context, req *runtimev1.FreezeRequest) (*runtimev1.FreezeResponse, error) {
	s := f.s
	s.setFrozen(req.GetFrozen())
	if req.GetFrozen() {
		s.log.Info("injected fault: runtime frozen; CRI calls block until thawed")
	} else {
		s.log.Info("runtime thawed; CRI calls proceed")
	}
	return &runtimev1.FreezeResponse{}, nil
}

// setFrozen freezes or thaws the runtime. Serve thaws it before it
// stops, so that calls blocked without a deadline let it stop.
func (s *Server) setFrozen(frozen bool) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	switch {
	case frozen && s.faults.thawc == nil:
		s.faults.thawc = make(chan struct{})
	case !frozen && s.faults.thawc != nil:
		close(s.faults.thawc)
		s.faults.thawc = nil
	}
}

// waitFrozen blocks while the runtime is frozen, or until ctx ends, as a
// call to a hung runtime does: its caller's deadline is what ends it.
func (s *Server) waitFrozen(ctx context.Context, method string) error {
	// The Faults service never freezes (Freeze(false) must get through),
	// nor does the pod network: a hung containerd leaves the kernel's
	// network alone, and the kubelet's HTTP and TCP probes go on.
	if strings.HasPrefix(method, "/"+runtimev1.Faults_ServiceDesc.ServiceName+"/") ||
		strings.HasPrefix(method, "/"+runtimev1.PodNetwork_ServiceDesc.ServiceName+"/") {
		return nil
	}
	s.faults.mu.Lock()
	thawc := s.faults.thawc
	s.faults.mu.Unlock()
	if thawc == nil {
		return nil
	}
	select {
	case <-thawc:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// waitWhileFrozen holds unary CRI calls while the runtime is frozen.
func (s *Server) waitWhileFrozen(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := s.waitFrozen(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// waitWhileFrozenStream holds the opening of CRI streams (the kubelet's
// GetContainerEvents) while the runtime is frozen; a stream already open
// goes on.
func (s *Server) waitWhileFrozenStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := s.waitFrozen(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}

// InspectProcess shows what `ps`, `ss -tln` and `find / -type f` would
// show inside the container: its command line and environment as it was
// started, its memory, its listening ports and its files. A container
// that has exited shows what its process left.
func (f faultsServer) InspectProcess(_ context.Context, req *runtimev1.InspectProcessRequest) (*runtimev1.InspectProcessResponse, error) {
	s := f.s
	s.mu.Lock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	sb := s.sandboxes[c.sandboxID]
	img := images.Lookup(c.image.ref)
	resp := &runtimev1.InspectProcessResponse{State: c.state.String(),
		Argv: commandLine(img, c.config.GetCommand(), c.config.GetArgs())}
	if sb != nil {
		resp.Env = effectiveEnv(environment(img, c.config, sb))
	}
	p := c.proc
	s.mu.Unlock()

	if p != nil {
		resp.MemoryBytes = p.sh.MemoryUsage()
		resp.ListeningPorts = p.sh.Ports()
		for _, file := range p.sh.FS.Files() {
			resp.Files = append(resp.Files, &runtimev1.File{Path: file.Path, Size: file.Size})
		}
	}
	s.faults.mu.Lock()
	resp.ProbeFailures = s.faults.probeFailures[c.id]
	s.faults.mu.Unlock()
	return resp, nil
}

// candidatePorts are the ports c's process may listen on, sorted: its
// image's EXPOSE and its pod's container ports.
// effectiveEnv is what `env` prints for env: one NAME=value per name, the
// last one given winning, in the order the names first appear.
func effectiveEnv(env []string) []string {
	index := map[string]int{}
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if i, ok := index[name]; ok {
			out[i] = kv
			continue
		}
		index[name] = len(out)
		out = append(out, kv)
	}
	return out
}
