package stats

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeRuntime answers the provider's CRI calls from fixed lists: one
// node's sandboxes, running containers and their stats (filters are the
// caller's business here). podStats nil answers Unimplemented, as a
// runtime without ListPodSandboxStats.
type fakeRuntime struct {
	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container
	stats      []*runtimeapi.ContainerStats
	podStats   []*runtimeapi.PodSandboxStats
	selectors  []map[string]string // the label selectors asked with
}

func (f *fakeRuntime) ListPodSandbox(_ context.Context, in *runtimeapi.ListPodSandboxRequest, _ ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error) {
	f.selectors = append(f.selectors, in.GetFilter().GetLabelSelector())
	return &runtimeapi.ListPodSandboxResponse{Items: f.sandboxes}, nil
}

func (f *fakeRuntime) ListContainers(_ context.Context, in *runtimeapi.ListContainersRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	f.selectors = append(f.selectors, in.GetFilter().GetLabelSelector())
	return &runtimeapi.ListContainersResponse{Containers: f.containers}, nil
}

func (f *fakeRuntime) ListContainerStats(_ context.Context, in *runtimeapi.ListContainerStatsRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error) {
	f.selectors = append(f.selectors, in.GetFilter().GetLabelSelector())
	return &runtimeapi.ListContainerStatsResponse{Stats: f.stats}, nil
}

func (f *fakeRuntime) ListPodSandboxStats(context.Context, *runtimeapi.ListPodSandboxStatsRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	if f.podStats == nil {
		return nil, status.Error(codes.Unimplemented, "ListPodSandboxStats")
	}
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: f.podStats}, nil
}

// containerStats is a CRI reading of container id at t.
func containerStats(id, name string, t time.Time, coreNanos, workingSet, layer uint64) *runtimeapi.ContainerStats {
	return &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: name}},
		Cpu:        &runtimeapi.CpuUsage{Timestamp: t.UnixNano(), UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: coreNanos}},
		Memory: &runtimeapi.MemoryUsage{Timestamp: t.UnixNano(), WorkingSetBytes: &runtimeapi.UInt64Value{Value: workingSet},
			UsageBytes: &runtimeapi.UInt64Value{Value: workingSet + 100}, RssBytes: &runtimeapi.UInt64Value{Value: workingSet / 2}},
		WritableLayer: &runtimeapi.FilesystemUsage{UsedBytes: &runtimeapi.UInt64Value{Value: layer}},
	}
}
