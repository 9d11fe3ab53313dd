package kubelet

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The kubelet keeps no container state of its own: on every sync it asks
// the runtime what it has for the pod (the real kubelet's GetPodStatus),
// finding the pod's sandboxes and containers by the labels it put on them.
// That is also why a restarted kubelet finds its pods again in a runtime
// that outlived it.

// podSandbox is one pod as the runtime has it: its newest sandbox and,
// by container name, the newest instance of each container.
type podSandbox struct {
	ID         string
	Attempt    uint32
	Ready      bool   // SANDBOX_READY: its network is up
	IP         string // "" for a stopped sandbox
	Containers map[string]*runtimeContainer
}

// runtimeContainer is one instance (one attempt) of a pod's container.
type runtimeContainer struct {
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
	// (terminationmessage.go).
	Message string
	LogPath string // its CRI log file
	// Previous is the instance this one replaced: what `kubectl logs
	// --previous` and the status' lastState show. Older ones are dead
	// instances before Previous, which the kubelet removes.
	Previous *runtimeContainer
	Older    []string
	// NotStarted and NotReady are what its probes say of a running
	// instance (probes.go): its startup probe has not succeeded yet; its
	// readiness probe has not succeeded, or it has not started.
	NotStarted, NotReady bool
	// Resources are its cgroup settings as the runtime has them now
	// (resize.go); nil if the runtime does not say.
	Resources *runtimeapi.LinuxContainerResources
}

// podSandbox returns what the runtime has for the pod with uid, or nil
// if it has no sandbox for it.
func (rs *runtimeService) podSandbox(ctx context.Context, uid types.UID) (*podSandbox, error) {
	list, err := rs.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{labelPodUID: string(uid)}}})
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	var newest *runtimeapi.PodSandbox
	for _, sb := range list.GetItems() {
		if newest == nil || sb.GetMetadata().GetAttempt() > newest.GetMetadata().GetAttempt() {
			newest = sb
		}
	}
	if newest == nil {
		return nil, nil
	}
	st, err := rs.runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: newest.GetId()})
	if err != nil {
		return nil, fmt.Errorf("pod sandbox status: %w", err)
	}
	out := &podSandbox{ID: newest.GetId(), Attempt: newest.GetMetadata().GetAttempt(),
		Ready: st.GetStatus().GetState() == runtimeapi.PodSandboxState_SANDBOX_READY,
		IP:    st.GetStatus().GetNetwork().GetIp(), Containers: map[string]*runtimeContainer{}}
	cs, err := rs.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: out.ID}})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	byName := map[string][]*runtimeContainer{}
	for _, c := range cs.GetContainers() {
		rc, err := rs.containerStatus(ctx, c)
		if err != nil {
			return nil, err
		}
		byName[rc.Name] = append(byName[rc.Name], rc)
	}
	for name, instances := range byName {
		sort.Slice(instances, func(i, j int) bool { return instances[i].Attempt > instances[j].Attempt })
		cur := instances[0]
		if len(instances) > 1 {
			cur.Previous = instances[1]
		}
		for _, old := range instances[min(2, len(instances)):] {
			cur.Older = append(cur.Older, old.RawID)
		}
		out.Containers[name] = cur
	}
	return out, nil
}

// containerStatus completes what ListContainers said of c with its
// ContainerStatus: times, exit code, reason and log path.
func (rs *runtimeService) containerStatus(ctx context.Context, c *runtimeapi.Container) (*runtimeContainer, error) {
	resp, err := rs.runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.GetId()})
	if err != nil {
		return nil, fmt.Errorf("container status: %w", err)
	}
	st := resp.GetStatus()
	rc := &runtimeContainer{ID: rs.containerID(c.GetId()), RawID: c.GetId(), Name: c.GetLabels()[labelContainerName], Image: c.GetImage().GetUserSpecifiedImage(),
		ImageID: st.GetImageRef(), State: st.GetState(), Attempt: c.GetMetadata().GetAttempt(),
		StartedAt: unixNano(st.GetStartedAt()), FinishedAt: unixNano(st.GetFinishedAt()),
		ExitCode: st.GetExitCode(), Reason: st.GetReason(), LogPath: st.GetLogPath(), Resources: st.GetResources().GetLinux()}
	if rc.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		rc.Message = terminationMessage(st, rs.nodeDisk(c.GetLabels()[labelNodeName]))
	}
	if rc.Name == "" { // not made by a kubelet: fall back on the CRI name
		rc.Name = c.GetMetadata().GetName()
	}
	if rc.Image == "" {
		rc.Image = c.GetImage().GetImage()
	}
	return rc, nil
}

// nodeDisk is the real directory of node's "/", "" without nodes' disks.
func (rs *runtimeService) nodeDisk(node string) string {
	if rs.nodeRoot == "" || node == "" {
		return ""
	}
	return filepath.Join(rs.nodeRoot, node)
}

// containerID is the pod status' containerID: "<runtime>://<id>", as
// "containerd://4f1c..." on a real node.
func (rs *runtimeService) containerID(id string) string { return rs.name + "://" + id }

// rawContainerID is the runtime's ID in a status' containerID.
func rawContainerID(id string) string {
	if _, raw, ok := strings.Cut(id, "://"); ok {
		return raw
	}
	return id
}

func unixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// instance is the instance of rc's container whose pod-status ID is id:
// rc itself or the one before it; nil if neither (or rc is nil).
func (rc *runtimeContainer) instance(id string) *runtimeContainer {
	for c := rc; c != nil && id != ""; c = c.Previous {
		if c.ID == id {
			return c
		}
	}
	return nil
}
