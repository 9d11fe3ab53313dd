package kubelet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/version"
)

// What the node says about itself in status.nodeInfo; `kubectl get nodes
// -o wide` shows the versions, OS image and kernel.
const (
	kubeletVersion = version.GitVersion // the Kubernetes version the API server reports
	osImage        = "mkube fake node"
	kernelVersion  = "6.8.0-mkube"
	// maxNodeImages is the kubelet's --node-status-max-images default: the
	// 50 largest images are enough for the scheduler's ImageLocality.
	maxNodeImages = 50
)

// runtimeInfo is what the node status says of the container runtime.
type runtimeInfo struct {
	// Version is "<runtime_name>://<runtime_version>" from CRI Version,
	// nodeInfo.containerRuntimeVersion: "mkube://v0.1.0", as a real node
	// says "containerd://1.7.24".
	Version string
	Images  []corev1.ContainerImage // largest first
	// Down says why the runtime does not answer, "" while it does: then
	// the node is not Ready (the real kubelet: "container runtime is
	// down", or "PLEG is not healthy").
	Down string
	// MemoryUsed is what the node's running containers hold, in bytes.
	MemoryUsed int64
}

// evictionHardMemory is the kubelet's default --eviction-hard
// memory.available<100Mi: less available than this is MemoryPressure.
const evictionHardMemory = 100 << 20

// memoryPressure: the containers leave the node less than
// evictionHardMemory of its memory.
func memoryPressure(capacity corev1.ResourceList, used int64) bool {
	mem, ok := capacity[corev1.ResourceMemory]
	return ok && mem.Value()-used < evictionHardMemory
}

// nodeStatus is the node's status as the kubelet's status setters compute
// it on every update: capacity, addresses, versions, images, and the
// conditions with this heartbeat's time. Fields the kubelet does not own
// are kept from old.
func nodeStatus(cfg Config, rt runtimeInfo, old corev1.NodeStatus, now time.Time) corev1.NodeStatus {
	st := *old.DeepCopy()
	// The kubelet sets the resources it knows and keeps the others: an
	// extended resource a user patched into status.capacity (the
	// Kubernetes docs' way to advertise a dongle) survives heartbeats.
	// Allocatable is all of capacity: a fake node reserves nothing.
	if st.Capacity == nil {
		st.Capacity = corev1.ResourceList{}
	}
	for name, q := range cfg.Capacity {
		st.Capacity[name] = q.DeepCopy()
	}
	st.Allocatable = st.Capacity.DeepCopy()
	st.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: cfg.NodeIP.String()},
		{Type: corev1.NodeHostName, Address: cfg.NodeName},
	}
	st.DaemonEndpoints = corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(cfg.Port)}}
	id := machineID(cfg.NodeName)
	st.NodeInfo = corev1.NodeSystemInfo{
		MachineID: id, SystemUUID: id,
		KernelVersion: kernelVersion, OSImage: osImage, ContainerRuntimeVersion: rt.Version,
		KubeletVersion: kubeletVersion, OperatingSystem: "linux", Architecture: "amd64",
	}
	st.Images = nil
	if len(rt.Images) > 0 {
		st.Images = rt.Images[:min(len(rt.Images), maxNodeImages)]
	}
	st.Conditions = nodeConditions(old.Conditions, now, rt.Down, memoryPressure(st.Capacity, rt.MemoryUsed))
	return st
}

// nodeConditions: a fake node never runs short of memory, disk or PIDs,
// and is Ready as long as its kubelet posts status. Each heartbeat renews
// lastHeartbeatTime; lastTransitionTime changes only when the status does
// (after the node lifecycle controller marked the node Unknown, say).
// Conditions the kubelet does not own are kept after its own.
func nodeConditions(old []corev1.NodeCondition, now time.Time, runtimeDown string, memPressure bool) []corev1.NodeCondition {
	t := metav1.NewTime(now).Rfc3339Copy()
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"}
	if runtimeDown != "" {
		ready = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
			Message: "container runtime is down: " + runtimeDown}
	}
	memory := corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"}
	if memPressure {
		memory = corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue, Reason: "KubeletHasInsufficientMemory", Message: "kubelet has insufficient memory available"}
	}
	want := []corev1.NodeCondition{
		memory,
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		ready,
	}
	owned := map[corev1.NodeConditionType]bool{}
	for i := range want {
		c := &want[i]
		owned[c.Type] = true
		c.LastHeartbeatTime, c.LastTransitionTime = t, t
		for _, o := range old {
			if o.Type == c.Type && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	for _, o := range old {
		if !owned[o.Type] {
			want = append(want, o)
		}
	}
	return want
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(st corev1.NodeStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// machineID stands in for /etc/machine-id: 32 hex digits, stable per node.
func machineID(nodeName string) string {
	sum := sha256.Sum256([]byte("mkube-node/" + nodeName))
	return hex.EncodeToString(sum[:16])
}

// runHeartbeats renews the node status and lease every StatusInterval
// until ctx ends. A node whose heartbeats stop is marked NotReady (then
// its pods evicted) by the node lifecycle controller.
func (k *Kubelet) runHeartbeats(ctx context.Context, offset time.Duration) {
	// A fleet's nodes beat in turn, spread over the interval, rather than
	// thousands at once.
	if offset > 0 {
		select {
		case <-ctx.Done():
			return
		case <-k.clock.After(offset):
		}
	}
	t := k.clock.NewTicker(k.cfg.StatusInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			k.heartbeat(ctx)
		}
	}
}

// heartbeat is one round of both of a kubelet's heartbeats: the Lease,
// cheap and frequent, and the node status, which also carries the images.
// Failures are logged and retried at the next round.
func (k *Kubelet) heartbeat(ctx context.Context) {
	if due, err := k.nodeStatusDue(ctx); err != nil && ctx.Err() == nil {
		k.log.Warn("node status check failed", "err", err)
	} else if due {
		if err := k.updateNodeStatus(ctx); err != nil && ctx.Err() == nil {
			k.log.Warn("node status update failed", "err", err)
		}
	}
	if err := k.lease.Renew(ctx); err != nil && ctx.Err() == nil {
		k.log.Warn("node lease renewal failed", "err", err)
	}
}

// nodeStatusDue says whether this heartbeat writes the node status: every
// one, unless NodeStatusReportFrequency is set (a fleet's nodes: 5 min,
// as Kubernetes'), then only when it is that old or the node's images
// changed; the Lease alone says the node is alive meanwhile (KEP-589).
func (k *Kubelet) nodeStatusDue(ctx context.Context) (bool, error) {
	if k.cfg.NodeStatusReportFrequency <= 0 {
		return true, nil
	}
	rt, err := k.runtimeInfo(ctx)
	if err != nil {
		return false, err
	}
	return k.nodeState.Changed(rt.Images, rt.Down, memoryPressure(k.cfg.Capacity, rt.MemoryUsed)), nil
}

// updateNodeStatus re-reads the Node and writes its new status with PUT
// nodes/NAME/status, retrying on conflict (the node's labels or taints may
// be changed by users at any time).
func (k *Kubelet) updateNodeStatus(ctx context.Context) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := k.client.Get(ctx, client.Nodes, "", k.cfg.NodeName, node); err != nil {
			if apierrors.IsNotFound(err) {
				// As a real kubelet: it registers once, at start.
				return fmt.Errorf("node %s was deleted; restart the kubelet to register it again: %w", k.cfg.NodeName, err)
			}
			return fmt.Errorf("get node: %w", err)
		}
		next := node.DeepCopy()
		rt, err := k.runtimeInfo(ctx)
		if err != nil {
			return err
		}
		next.Status = nodeStatus(k.cfg, rt, node.Status, k.clock.Now())
		if err := k.client.UpdateStatus(ctx, client.Nodes, "", node.Name, next, next); err != nil {
			return fmt.Errorf("update node status: %w", err)
		}
		k.nodeState.Reported(rt.Images, rt.Down, memoryPressure(k.cfg.Capacity, rt.MemoryUsed))
		if rt.Down != "" {
			k.log.Warn("node not ready: the container runtime does not answer", "err", rt.Down)
		}
		switch was, is := nodeReady(node.Status), nodeReady(next.Status); {
		case !was && is:
			k.recorder.Event(k.node, corev1.EventTypeNormal, "NodeReady", "Node %s status is now: NodeReady", k.cfg.NodeName)
		case was && !is:
			k.recorder.Event(k.node, corev1.EventTypeNormal, "NodeNotReady", "Node %s status is now: NodeNotReady", k.cfg.NodeName)
		}
		k.log.Debug("node status updated", "rv", next.ResourceVersion, "images", len(next.Status.Images))
		return nil
	})
}

// runtimeCheckTimeout is how long the kubelet waits for the runtime's
// answer in a heartbeat.
const runtimeCheckTimeout = 5 * time.Second

// runtimeDownAfter is how long the runtime may fail to answer before the
// node says it is down: three heartbeats (30 s), as the real kubelet
// waits for its PLEG threshold rather than a single slow call.
func (k *Kubelet) runtimeDownAfter() time.Duration {
	return max(3*k.cfg.StatusInterval, runtimeCheckTimeout)
}

// runtimeInfo asks the runtime for its images (ListImages), largest
// first, then by name: the order of node.status.images, whose names are
// the image's digests then its tags, as the kubelet's images setter
// lists them; and for the memory its node's containers use, when
// nodeState.StatsDue, or else only whether it is up (Status, the real kubelet's
// runtime check).
//
// A runtime that does not answer within runtimeCheckTimeout (hung, or
// frozen by `mkube freeze`) is reported Down, with the images last seen,
// rather than an error: the node then says it is not Ready.
func (k *Kubelet) runtimeInfo(ctx context.Context) (runtimeInfo, error) {
	cctx, cancel := context.WithTimeout(ctx, runtimeCheckTimeout)
	defer cancel()
	imgs, err := k.fleet.images(cctx)
	readStats := k.nodeState.StatsDue()
	var stats *runtimeapi.ListContainerStatsResponse
	switch {
	case err != nil:
	case readStats:
		stats, err = k.runtime.runtime.ListContainerStats(cctx, &runtimeapi.ListContainerStatsRequest{
			Filter: &runtimeapi.ContainerStatsFilter{LabelSelector: map[string]string{labelNodeName: k.cfg.NodeName}}})
	default:
		_, err = k.runtime.runtime.Status(cctx, &runtimeapi.StatusRequest{})
	}
	if err != nil {
		// The stats, if read, are read at the next heartbeat instead.
		down, lastImages := k.nodeState.RuntimeFailed(readStats, k.runtimeDownAfter())
		if down && ctx.Err() == nil {
			return runtimeInfo{Version: k.runtime.version, Images: lastImages, Down: status.Convert(err).Message()}, nil
		}
		// A runtime that is slow, not gone (a busy node): not down yet.
		return runtimeInfo{}, fmt.Errorf("container runtime: %w", err)
	}
	var used *int64
	if readStats {
		var sum int64
		for _, st := range stats.GetStats() {
			sum += int64(st.GetMemory().GetWorkingSetBytes().GetValue())
		}
		used = &sum
	}
	return runtimeInfo{Version: k.runtime.version, Images: imgs, MemoryUsed: k.nodeState.RuntimeAnswered(used)}, nil
}

// imagesMaxAge is how long a fleet's nodes share one ListImages: they
// share one runtime, so its images are every node's, and 5,000 nodes
// need not ask for them 500 times a second.
const imagesMaxAge = time.Second

// images are the runtime's images as node.status.images lists them,
// asked for at most once per imagesMaxAge. While one node asks, the
// others take the images last seen rather than queue behind it.
func (f *Fleet) images(ctx context.Context) ([]corev1.ContainerImage, error) {
	f.imagesMu.Lock()
	now := f.clock.Now()
	fresh := !f.imagesAt.IsZero() && now.Sub(f.imagesAt) < imagesMaxAge
	if fresh || (f.imagesFetching && f.imagesCache != nil) {
		defer f.imagesMu.Unlock()
		return f.imagesCache, nil
	}
	f.imagesFetching = true
	f.imagesMu.Unlock()
	resp, err := f.runtime.images.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	f.imagesMu.Lock()
	defer f.imagesMu.Unlock()
	f.imagesFetching = false
	if err != nil {
		return nil, err
	}
	imgs := make([]corev1.ContainerImage, 0, len(resp.GetImages()))
	for _, img := range resp.GetImages() {
		names := append(append([]string{}, img.GetRepoDigests()...), img.GetRepoTags()...)
		imgs = append(imgs, corev1.ContainerImage{Names: names, SizeBytes: int64(img.GetSize())})
	}
	sort.SliceStable(imgs, func(i, j int) bool {
		if imgs[i].SizeBytes != imgs[j].SizeBytes {
			return imgs[i].SizeBytes > imgs[j].SizeBytes
		}
		return strings.Join(imgs[i].Names, ",") < strings.Join(imgs[j].Names, ",")
	})
	f.imagesCache, f.imagesAt = imgs, now
	return imgs, nil
}

// imagesChanged makes the next images ask the runtime again: a node
// pulled one.
func (f *Fleet) imagesChanged() {
	f.imagesMu.Lock()
	defer f.imagesMu.Unlock()
	f.imagesAt = time.Time{}
}
