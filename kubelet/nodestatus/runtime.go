package nodestatus

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
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

// runtimeCheckTimeout is how long the kubelet waits for the runtime's
// answer in a heartbeat.
const runtimeCheckTimeout = 5 * time.Second

// runtimeDownAfter is how long the runtime may fail to answer before the
// node says it is down: three heartbeats (30 s), as the real kubelet
// waits for its PLEG threshold rather than a single slow call.
func (m *Manager) runtimeDownAfter() time.Duration {
	return max(3*m.o.StatusInterval, runtimeCheckTimeout)
}

// runtimeInfo asks the runtime for its images (ListImages), largest
// first, then by name: the order of node.status.images, whose names are
// the image's digests then its tags, as the kubelet's images setter
// lists them; and for the memory its node's containers use, when
// the State's StatsDue, or else only whether it is up (Status, the real
// kubelet's runtime check).
//
// A runtime that does not answer within runtimeCheckTimeout (hung, or
// frozen by `mkube freeze`) is reported Down, with the images last seen,
// rather than an error: the node then says it is not Ready.
func (m *Manager) runtimeInfo(ctx context.Context) (runtimeInfo, error) {
	cctx, cancel := context.WithTimeout(ctx, runtimeCheckTimeout)
	defer cancel()
	imgs, err := m.o.Images(cctx)
	readStats := m.state.StatsDue()
	var stats *runtimeapi.ListContainerStatsResponse
	switch {
	case err != nil:
	case readStats:
		stats, err = m.o.Runtime.ListContainerStats(cctx, &runtimeapi.ListContainerStatsRequest{
			Filter: &runtimeapi.ContainerStatsFilter{LabelSelector: m.o.NodeContainers}})
	default:
		_, err = m.o.Runtime.Status(cctx, &runtimeapi.StatusRequest{})
	}
	if err != nil {
		// The stats, if read, are read at the next heartbeat instead.
		down, lastImages := m.state.RuntimeFailed(readStats, m.runtimeDownAfter())
		if down && ctx.Err() == nil {
			return runtimeInfo{Version: m.o.RuntimeVersion, Images: lastImages, Down: status.Convert(err).Message()}, nil
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
	return runtimeInfo{Version: m.o.RuntimeVersion, Images: imgs, MemoryUsed: m.state.RuntimeAnswered(used)}, nil
}
