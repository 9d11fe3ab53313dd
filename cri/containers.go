package cri

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// container is one instance (one attempt) of a pod's container. It is
// CREATED, then RUNNING once started, then EXITED; a restart is a new
// container with the next attempt number, made by the kubelet.
type container struct {
	id        string
	sandboxID string
	name      string // reserved until removed: "<container>_<pod>_<namespace>_<uid>_<attempt>"
	config    *runtimeapi.ContainerConfig
	image     *image // as it was when the container was created
	logPath   string // the log file, "" if none (see logs.go)

	state                            runtimeapi.ContainerState
	createdAt, startedAt, finishedAt int64 // ns since the epoch; 0 until it happens
	exitCode                         int32
	reason, message                  string    // why it exited: "Completed", "Error", ...
	proc                             *process  // its process once started (process.go)
	resources                        resources // its cgroup settings and CPU accounting (cgroups.go)
	cpuRate                          cpuRate   // its usage_nano_cores (stats.go)
}

// CreateContainer creates a container in a ready sandbox from an image
// already on the node: CRI runtimes do not pull on create (the kubelet
// pulls first), so a missing image is NotFound, as in containerd.
func (s *Server) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	switch {
	case req.GetPodSandboxId() == "":
		return nil, status.Error(codes.InvalidArgument, "pod sandbox ID is required")
	case md.GetName() == "":
		return nil, status.Error(codes.InvalidArgument, "container config must include metadata with a name")
	case cfg.GetImage().GetImage() == "":
		return nil, status.Error(codes.InvalidArgument, "container config must include an image")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, sb, err := find(s.sandboxes, "sandbox", req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox %q is not ready", sb.id)
	}
	img, err := s.findImage(cfg.GetImage().GetImage())
	if err != nil {
		return nil, err
	}
	pod := sb.config.GetMetadata()
	name := fmt.Sprintf("%s_%s_%s_%s_%d", md.GetName(), pod.GetName(), pod.GetNamespace(), pod.GetUid(), md.GetAttempt())
	if owner, taken := s.names[name]; taken {
		return nil, status.Errorf(codes.AlreadyExists, "container name %q is reserved for %q", name, owner)
	}
	c := &container{id: newID(), sandboxID: sb.id, name: name, config: cfg, image: img,
		logPath: logPath(sb.config.GetLogDirectory(), cfg.GetLogPath()),
		state:   runtimeapi.ContainerState_CONTAINER_CREATED, createdAt: s.clock.Now().UnixNano()}
	c.resources.init(s.clock, cfg.GetLinux().GetResources())
	s.addContainer(c)
	s.names[name] = c.id
	s.log.Info("created container", "container", md.GetName(), "attempt", md.GetAttempt(),
		"pod", pod.GetNamespace()+"/"+pod.GetName(), "id", c.id, "image", img.ref)
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

// StartContainer starts a created container (see process.go for what it
// does then). Only a CREATED container can start: a stopped one is never
// started again, the kubelet creates a new attempt instead.
func (s *Server) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is in %s state", c.id, c.state)
	}
	sb := s.sandboxes[c.sandboxID]
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox %q is not ready", sb.id)
	}
	if err := s.start(c, sb); err != nil {
		return nil, status.Errorf(codes.Internal, "start container %q: %v", c.id, err)
	}
	s.log.Info("started container", "container", c.config.GetMetadata().GetName(), "id", c.id, "log", c.logPath)
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer stops a running container within the timeout (seconds).
// Stopping a container that is not running does nothing, as CRI requires
// of a stopped one and containerd does for a created one.
func (s *Server) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	s.mu.Lock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	s.stop(c, req.GetTimeout()) // waits for the grace period without the lock
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer forgets a container. CRI: "If the container is running,
// the container must be forcibly removed", so a running one is killed
// first; removing one that is not there is fine (the call is idempotent).
// Its log file stays: the kubelet deletes logs itself.
func (s *Server) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	if status.Code(err) == codes.NotFound {
		return &runtimeapi.RemoveContainerResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	s.removeContainer(c)
	return &runtimeapi.RemoveContainerResponse{}, nil
}

// removeContainer kills c if it runs and forgets it. Callers hold s.mu.
func (s *Server) removeContainer(c *container) {
	s.kill(c)
	s.records.removeContainer(c)
	delete(s.names, c.name)
	s.log.Info("removed container", "container", c.config.GetMetadata().GetName(), "id", c.id)
}

// ListContainers returns the containers that pass every filter given,
// oldest first. ID filters may be prefixes, as in containerd.
func (s *Server) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f := req.GetFilter()
	s.mu.Lock()
	defer s.mu.Unlock()
	wantID, wantSandbox := f.GetId(), f.GetPodSandboxId()
	if id, _, err := find(s.containers, "container", wantID); err == nil {
		wantID = id
	}
	if id, _, err := find(s.sandboxes, "sandbox", wantSandbox); err == nil {
		wantSandbox = id
	}
	var out []*runtimeapi.Container
	for _, c := range s.containerCandidates(wantSandbox) {
		switch {
		case wantID != "" && c.id != wantID:
		case wantSandbox != "" && c.sandboxID != wantSandbox:
		case f.GetState() != nil && c.state != f.GetState().GetState():
		case !matchLabels(c.config.GetLabels(), f.GetLabelSelector()):
		default:
			out = append(out, &runtimeapi.Container{Id: c.id, PodSandboxId: c.sandboxID, Metadata: c.config.GetMetadata(),
				Image: c.config.GetImage(), ImageRef: c.image.id, ImageId: c.image.id, State: c.state, CreatedAt: c.createdAt,
				Labels: c.config.GetLabels(), Annotations: c.config.GetAnnotations()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].Id < out[j].Id
	})
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

// ContainerStatus reports one container: what the kubelet turns into the
// pod's containerStatuses (state, startedAt, exitCode, reason, ...).
func (s *Server) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	if err != nil {
		return nil, err
	}
	resp := &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{
		Id: c.id, Metadata: c.config.GetMetadata(), State: c.state,
		CreatedAt: c.createdAt, StartedAt: c.startedAt, FinishedAt: c.finishedAt,
		ExitCode: c.exitCode, Reason: c.reason, Message: c.message,
		Image: c.config.GetImage(), ImageRef: c.image.id, ImageId: c.image.id,
		Labels: c.config.GetLabels(), Annotations: c.config.GetAnnotations(),
		Mounts: c.config.GetMounts(), LogPath: c.logPath,
		Resources: &runtimeapi.ContainerResources{Linux: c.resources.get()},
	}}
	// As containerd does, the status names the image by its full tag
	// (what the kubelet shows as the pod's containerStatuses[].image) and,
	// for an image pulled by digest, refers to it by that digest (imageID).
	if img := c.image.toCRI(); len(img.RepoTags) > 0 {
		resp.Status.Image = &runtimeapi.ImageSpec{Image: img.RepoTags[0]}
	} else {
		resp.Status.ImageRef = img.RepoDigests[0]
	}
	if req.GetVerbose() {
		info, err := json.Marshal(containerInfo{SandboxID: c.sandboxID, Pid: 0, Config: c.config})
		if err != nil {
			return nil, status.Errorf(codes.Internal, "container %q: encode info: %v", c.id, err)
		}
		resp.Info = map[string]string{"info": string(info)}
	}
	return resp, nil
}

// containerInfo is what `crictl inspect` shows under "info": a subset of
// what containerd puts there, under containerd's names. The config holds
// the command, args, envs and mounts the kubelet asked for.
type containerInfo struct {
	SandboxID string                      `json:"sandboxID"`
	Pid       uint32                      `json:"pid"` // no real process runs: 0
	Config    *runtimeapi.ContainerConfig `json:"config"`
}

// ReopenContainerLog is how the kubelet's log rotation asks the runtime
// to write to a fresh file. The log file is opened for each write here,
// so there is nothing to reopen; like containerd, it refuses a container
// that is not running.
func (s *Server) ReopenContainerLog(ctx context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is not running", c.id)
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}
