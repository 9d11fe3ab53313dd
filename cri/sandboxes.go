package cri

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
)

// sandbox is a pod on the node: on a real runtime, the network namespace
// its containers share (held open by the pause container) and its IP.
type sandbox struct {
	id     string
	name   string // reserved until removed: "<pod>_<namespace>_<uid>_<attempt>"
	config *runtimeapi.PodSandboxConfig
	// handler is the RuntimeClass handler the kubelet asked for ("" is
	// the default), one of runtimeHandlers; every one is the same kind
	// of sandbox here, and the runtime just reports it.
	handler   string
	state     runtimeapi.PodSandboxState
	createdAt int64       // ns since the epoch, as CRI counts
	ip        netip.Addr  // zero for host-network pods and once stopped
	pause     *images.CPU // its pause process's CPU: the pod's own, besides its containers' (sandboxstats.go)
	cpuRate   cpuRate     // the pod's usage_nano_cores (stats.go)
}

// Configs are never changed after they are stored, so responses can share
// them with the runtime's records.

func (s *Server) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	if md.GetName() == "" || md.GetNamespace() == "" || md.GetUid() == "" {
		return nil, status.Error(codes.InvalidArgument, "sandbox config must include metadata with name, namespace and uid")
	}
	if err := checkRuntimeHandler(req.GetRuntimeHandler()); err != nil {
		return nil, err // runtimehandlers.go
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// containerd names a sandbox after its pod and attempt; the name is
	// taken until RemovePodSandbox, so the kubelet runs a new sandbox for
	// a pod with the next attempt number.
	name := fmt.Sprintf("%s_%s_%s_%d", md.GetName(), md.GetNamespace(), md.GetUid(), md.GetAttempt())
	if owner, taken := s.names[name]; taken {
		return nil, status.Errorf(codes.AlreadyExists, "sandbox name %q is reserved for %q", name, owner)
	}
	sb := &sandbox{id: newID(), name: name, config: cfg, handler: req.GetRuntimeHandler(), pause: images.NewCPU(s.clock),
		state: runtimeapi.PodSandboxState_SANDBOX_READY, createdAt: s.clock.Now().UnixNano()}
	// A pod in the node's network namespace (hostNetwork: true) has the
	// node's IP, which the kubelet knows; the runtime reports none.
	if cfg.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() != runtimeapi.NamespaceMode_NODE {
		ip, err := s.ips.Allocate()
		if err != nil {
			return nil, status.Errorf(codes.ResourceExhausted, "run pod sandbox %s: %v", name, err)
		}
		sb.ip = ip
	}
	s.addSandbox(sb)
	s.names[name] = sb.id
	s.log.Info("ran pod sandbox", "pod", md.GetNamespace()+"/"+md.GetName(), "uid", md.GetUid(),
		"attempt", md.GetAttempt(), "id", sb.id, "ip", sb.ipString())
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: sb.id}, nil
}

// StopPodSandbox kills the sandbox's running containers and frees its IP,
// as CRI asks ("reclaims network resources"). Stopping a stopped sandbox
// does nothing; an unknown one is NotFound, as in containerd.
func (s *Server) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, sb, err := find(s.sandboxes, "sandbox", req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	s.stopSandbox(sb)
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// stopSandbox stops sb. Callers hold s.mu.
func (s *Server) stopSandbox(sb *sandbox) {
	if sb.state == runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		return
	}
	// CRI: "If there are any running containers in the sandbox, they must
	// be forcibly terminated" — containerd kills them at once (SIGKILL).
	for _, c := range s.containersBySandbox[sb.id] {
		s.kill(c)
	}
	delete(s.sandboxesByIP, sb.ip) // the pod network no longer routes to it
	s.ips.Release(sb.ip)
	sb.ip = netip.Addr{}
	sb.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if sb.pause != nil {
		sb.pause.Stop() // its pause process ended
	}
	md := sb.config.GetMetadata()
	s.log.Info("stopped pod sandbox", "pod", md.GetNamespace()+"/"+md.GetName(), "id", sb.id)
}

// RemovePodSandbox forgets the sandbox and its containers, stopping it
// first if need be. Removing a sandbox that is not there is fine: CRI
// makes this call idempotent.
func (s *Server) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, sb, err := find(s.sandboxes, "sandbox", req.GetPodSandboxId())
	if status.Code(err) == codes.NotFound {
		return &runtimeapi.RemovePodSandboxResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	s.stopSandbox(sb)
	for _, c := range s.containersBySandbox[sb.id] {
		s.removeContainer(c) // deleting from the map being ranged over is safe in Go
	}
	s.records.removeSandbox(sb)
	delete(s.names, sb.name)
	md := sb.config.GetMetadata()
	s.log.Info("removed pod sandbox", "pod", md.GetNamespace()+"/"+md.GetName(), "id", sb.id)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (s *Server) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, sb, err := find(s.sandboxes, "sandbox", req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	resp := &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{
		Id: sb.id, Metadata: sb.config.GetMetadata(), State: sb.state, CreatedAt: sb.createdAt,
		Network:        &runtimeapi.PodSandboxNetworkStatus{Ip: sb.ipString()},
		Labels:         sb.config.GetLabels(),
		Annotations:    sb.config.GetAnnotations(),
		RuntimeHandler: sb.handler,
	}}
	if req.GetVerbose() {
		info, err := json.Marshal(sandboxInfo{Pid: 0, NetNamespaceClosed: sb.state != runtimeapi.PodSandboxState_SANDBOX_READY,
			RuntimeHandler: sb.handler, Config: sb.config})
		if err != nil {
			return nil, status.Errorf(codes.Internal, "sandbox %q: encode info: %v", sb.id, err)
		}
		resp.Info = map[string]string{"info": string(info)}
	}
	return resp, nil
}

// sandboxInfo is what `crictl inspectp` shows under "info": a subset of
// what containerd puts there, under containerd's names.
type sandboxInfo struct {
	Pid                uint32                       `json:"pid"` // no pause process runs: 0
	NetNamespaceClosed bool                         `json:"netNamespaceClosed"`
	RuntimeHandler     string                       `json:"runtimeHandler"`
	Config             *runtimeapi.PodSandboxConfig `json:"config"`
}

// ListPodSandbox returns the sandboxes that pass every filter given, oldest
// first. An ID filter may be a prefix, as in containerd.
func (s *Server) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f := req.GetFilter()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*runtimeapi.PodSandbox
	for _, sb := range s.sandboxesMatching(f.GetId(), f.GetState(), f.GetLabelSelector()) {
		out = append(out, &runtimeapi.PodSandbox{Id: sb.id, Metadata: sb.config.GetMetadata(), State: sb.state,
			CreatedAt: sb.createdAt, Labels: sb.config.GetLabels(), Annotations: sb.config.GetAnnotations(), RuntimeHandler: sb.handler})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].Id < out[j].Id
	})
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

// sandboxesMatching are the sandboxes that pass a list's filter: an ID
// (or a prefix of one, as in containerd), a state, labels. Callers hold
// s.mu.
func (s *Server) sandboxesMatching(id string, state *runtimeapi.PodSandboxStateValue, labels map[string]string) []*sandbox {
	if full, _, err := find(s.sandboxes, "sandbox", id); err == nil {
		id = full
	}
	var out []*sandbox
	for _, sb := range s.sandboxCandidates(labels) {
		switch {
		case id != "" && sb.id != id:
		case state != nil && sb.state != state.GetState():
		case !matchLabels(sb.config.GetLabels(), labels):
		default:
			out = append(out, sb)
		}
	}
	return out
}

func (sb *sandbox) ipString() string {
	if !sb.ip.IsValid() {
		return ""
	}
	return sb.ip.String()
}
