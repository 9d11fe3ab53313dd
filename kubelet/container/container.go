package container

import (
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PodSandbox is one pod as the runtime has it: its newest sandbox and,
// by container name, the newest instance of each container.
type PodSandbox struct {
	ID         string
	Attempt    uint32
	Ready      bool   // SANDBOX_READY: its network is up
	IP         string // "" for a stopped sandbox
	Containers map[string]*Container
}

// Container is one instance (one attempt) of a pod's container.
type Container struct {
	ID      string // as the pod status has it: "mkube://<RawID>"
	RawID   string // the runtime's ID, for CRI calls
	Name    string
	Image   string // as the pod spec named it (the config's user_specified_image)
	ImageID string // the runtime's image_ref, the status' imageID
	State   runtimeapi.ContainerState
	Attempt uint32 // instances before this one: the status' restartCount

	StartedAt, FinishedAt time.Time // zero until it happens
	ExitCode              int32
	Reason                string
	// Message is an exited instance's termination message
	// (kubelet/kuberuntime's terminationmessage.go).
	Message string
	LogPath string // its CRI log file
	// Previous is the instance this one replaced: what `kubectl logs
	// --previous` and the status' lastState show. Older ones are dead
	// instances before Previous, which the kubelet removes.
	Previous *Container
	Older    []string
	// NotStarted and NotReady are what its probes say of a running
	// instance (package prober): its startup probe has not succeeded yet; its
	// readiness probe has not succeeded, or it has not started.
	NotStarted, NotReady bool
	// Resources are its cgroup settings as the runtime has them now
	// (the kubelet's resize.go); nil if the runtime does not say.
	Resources *runtimeapi.LinuxContainerResources
}

// RawContainerID is the runtime's ID in a status' containerID.
func RawContainerID(id string) string {
	if _, raw, ok := strings.Cut(id, "://"); ok {
		return raw
	}
	return id
}

// Instance is the instance of rc's container whose pod-status ID is id:
// rc itself or the one before it; nil if neither (or rc is nil).
func (rc *Container) Instance(id string) *Container {
	for c := rc; c != nil && id != ""; c = c.Previous {
		if c.ID == id {
			return c
		}
	}
	return nil
}
