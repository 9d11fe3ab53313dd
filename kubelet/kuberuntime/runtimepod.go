package kuberuntime

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The kubelet keeps no container state of its own: on every sync it asks
// the runtime what it has for the pod (the real kubelet's GetPodStatus),
// finding the pod's sandboxes and containers by the labels it put on them.
// That is also why a restarted kubelet finds its pods again in a runtime
// that outlived it.

// PodReader reads what a runtime has of the kubelet's pods.
type PodReader struct {
	Runtime runtimeapi.RuntimeServiceClient
	// RuntimeName is the runtime's runtime_name from Version: container
	// IDs in pod statuses are "<name>://<id>".
	RuntimeName string
	// NodeRoot is the nodes' disks (Config.NodeRoot), where the kubelet
	// reads what containers wrote to their termination-log files.
	NodeRoot string
}

// PodSandbox returns what the runtime has for the pod with uid, or nil
// if it has no sandbox for it.
func (r PodReader) PodSandbox(ctx context.Context, uid types.UID) (*kubecontainer.PodSandbox, error) {
	list, err := r.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{LabelPodUID: string(uid)}}})
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
	st, err := r.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: newest.GetId()})
	if err != nil {
		return nil, fmt.Errorf("pod sandbox status: %w", err)
	}
	out := &kubecontainer.PodSandbox{ID: newest.GetId(), Attempt: newest.GetMetadata().GetAttempt(),
		Ready: st.GetStatus().GetState() == runtimeapi.PodSandboxState_SANDBOX_READY,
		IP:    st.GetStatus().GetNetwork().GetIp(), Containers: map[string]*kubecontainer.Container{}}
	cs, err := r.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: out.ID}})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	byName := map[string][]*kubecontainer.Container{}
	for _, c := range cs.GetContainers() {
		rc, err := r.containerStatus(ctx, c)
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
func (r PodReader) containerStatus(ctx context.Context, c *runtimeapi.Container) (*kubecontainer.Container, error) {
	resp, err := r.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.GetId()})
	if err != nil {
		return nil, fmt.Errorf("container status: %w", err)
	}
	st := resp.GetStatus()
	rc := &kubecontainer.Container{ID: r.ContainerID(c.GetId()), RawID: c.GetId(), Name: c.GetLabels()[LabelContainerName], Image: c.GetImage().GetUserSpecifiedImage(),
		ImageID: st.GetImageRef(), State: st.GetState(), Attempt: c.GetMetadata().GetAttempt(),
		StartedAt: unixNano(st.GetStartedAt()), FinishedAt: unixNano(st.GetFinishedAt()),
		ExitCode: st.GetExitCode(), Reason: st.GetReason(), LogPath: st.GetLogPath(), Resources: st.GetResources().GetLinux()}
	if rc.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		rc.Message = terminationMessage(st, r.nodeDisk(c.GetLabels()[LabelNodeName]))
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
func (r PodReader) nodeDisk(node string) string {
	if r.NodeRoot == "" || node == "" {
		return ""
	}
	return filepath.Join(r.NodeRoot, node)
}

// ContainerID is the pod status' containerID: "<runtime>://<id>", as
// "containerd://4f1c..." on a real node.
func (r PodReader) ContainerID(id string) string { return r.RuntimeName + "://" + id }

func unixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
