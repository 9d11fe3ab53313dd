package cri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Pod stats are what `crictl statsp` and the kubelet's CRI stats
// provider read: a pod's cgroup holds its containers' cgroups and its
// pause process, so its CPU is theirs added up, the containers that
// exited included (their time stays counted in the pod's cgroup), and
// its memory is its running containers'. Network and process counts are
// not simulated.

// PodSandboxStats reports one pod.
func (s *Server) PodSandboxStats(ctx context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, sb, err := find(s.sandboxes, "sandbox", req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: s.podStats(sb)}, nil
}

// ListPodSandboxStats reports the ready pods that pass the filter, as
// containerd reports only the sandboxes whose cgroup is alive.
func (s *Server) ListPodSandboxStats(ctx context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	f := req.GetFilter()
	s.mu.Lock()
	defer s.mu.Unlock()
	ready := &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}
	var out []*runtimeapi.PodSandboxStats
	for _, sb := range s.sandboxesMatching(f.GetId(), ready, f.GetLabelSelector()) {
		out = append(out, s.podStats(sb))
	}
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: out}, nil
}

// podStats is sb's usage now, with its running containers' stats.
// Callers hold s.mu.
func (s *Server) podStats(sb *sandbox) *runtimeapi.PodSandboxStats {
	now := s.clock.Now().UnixNano()
	var cpu, memory uint64
	if sb.pause != nil {
		cpu = uint64(sb.pause.Stat().Usage)
	}
	var containers []*runtimeapi.ContainerStats
	for _, c := range s.containerCandidates(sb.id) {
		st := s.stats(c)
		cpu += st.GetCpu().GetUsageCoreNanoSeconds().GetValue()
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			memory += st.GetMemory().GetWorkingSetBytes().GetValue()
			containers = append(containers, st)
		}
	}
	return &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: sb.id, Metadata: sb.config.GetMetadata(),
			Labels: sb.config.GetLabels(), Annotations: sb.config.GetAnnotations()},
		Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu: &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: cpu},
				UsageNanoCores: &runtimeapi.UInt64Value{Value: sb.cpuRate.observe(sb.createdAt, now, cpu)}},
			Memory: &runtimeapi.MemoryUsage{Timestamp: now, WorkingSetBytes: &runtimeapi.UInt64Value{Value: memory},
				UsageBytes: &runtimeapi.UInt64Value{Value: memory}, RssBytes: &runtimeapi.UInt64Value{Value: memory}},
			Containers: containers,
		},
	}
}
