package cri

import (
	"context"
	"path"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
)

// Container stats are what `crictl stats` and the kubelet's resource
// view read:
//
//   - memory: what a container's process holds (what a program of the
//     image said it uses, e.g. stress --vm-bytes; 0 for most), plus the
//     tmpfs bytes it wrote (tmpfs.go), which the kubelet adds up for the
//     node's MemoryPressure;
//   - the writable layer: the bytes of the files it wrote outside its
//     mounts (images.FS.LayerBytes), which the kubelet's eviction manager
//     adds to its logs against its ephemeral-storage limit;
//   - CPU: the cumulative CPU time its processes used
//     (usage_core_nano_seconds), from its cgroup's accounting
//     (cgroups.go: a busy loop a core of the runtime's clock, capped by
//     its limit; never exactly 0), and usage_nano_cores, the rate since
//     a sample at least a second older, as cAdvisor and containerd
//     compute it between two reads.

// ContainerStats reports one container.
func (s *Server) ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, c, err := find(s.containers, "container", req.GetContainerId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatsResponse{Stats: s.stats(c)}, nil
}

// ListContainerStats reports the running containers that pass the filter.
// A filter on mkube's node label (a fleet's kubelet asking for its node)
// looks at that node's sandboxes only.
func (s *Server) ListContainerStats(ctx context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	f := req.GetFilter()
	s.mu.Lock()
	defer s.mu.Unlock()
	candidates := s.containerCandidates(f.GetPodSandboxId())
	if node, ok := f.GetLabelSelector()[labelNodeName]; ok && f.GetPodSandboxId() == "" {
		candidates = map[string]*container{}
		for id := range s.sandboxesByNode[node] {
			for cid, c := range s.containersBySandbox[id] {
				candidates[cid] = c
			}
		}
	}
	var out []*runtimeapi.ContainerStats
	for _, c := range candidates {
		switch {
		case c.state != runtimeapi.ContainerState_CONTAINER_RUNNING:
		case f.GetId() != "" && c.id != f.GetId():
		case !matchLabels(c.config.GetLabels(), f.GetLabelSelector()):
		default:
			out = append(out, s.stats(c))
		}
	}
	return &runtimeapi.ListContainerStatsResponse{Stats: out}, nil
}

// residentBase is what a running process holds before it allocates
// anything: its program's own pages (busybox's sh resides in about half a
// MiB). A container's working set is never 0 while it runs, as none is
// on a real node; metrics-server leaves out a pod that reads 0. The OOM
// killer judges only what the program allocates.
const residentBase = 512 << 10

// stats is c's usage now. Callers hold s.mu.
func (s *Server) stats(c *container) *runtimeapi.ContainerStats {
	now := s.clock.Now().UnixNano()
	var cpu uint64
	if c.resources.cpu != nil {
		cpu = uint64(c.resources.cpu.Stat().Usage)
	}
	since := c.startedAt
	if since == 0 {
		since = c.createdAt
	}
	var memory, layer uint64
	if c.proc != nil && c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		memory = uint64(residentBase + c.proc.sh.MemoryUsage() + s.memory.chargedTo(memoryCharge(c)))
		layer = uint64(c.proc.sh.FS.LayerBytes(s.lowerLayer(c)))
	}
	return &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{Id: c.id, Metadata: c.config.GetMetadata(),
			Labels: c.config.GetLabels(), Annotations: c.config.GetAnnotations()},
		Cpu: &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: cpu},
			UsageNanoCores: &runtimeapi.UInt64Value{Value: c.cpuRate.observe(since, now, cpu)}},
		Memory: &runtimeapi.MemoryUsage{Timestamp: now, WorkingSetBytes: &runtimeapi.UInt64Value{Value: memory},
			UsageBytes: &runtimeapi.UInt64Value{Value: memory}, RssBytes: &runtimeapi.UInt64Value{Value: memory}},
		WritableLayer: &runtimeapi.FilesystemUsage{Timestamp: now, UsedBytes: &runtimeapi.UInt64Value{Value: layer}},
	}
}

// lowerLayer is what c's filesystem held before its process ran (the
// image's files, and the sandbox's files, which containerd bind-mounts or
// the kernel shows: process.go's sandboxFiles): none of it is c's
// writable layer until c changes it. Callers hold s.mu.
func (s *Server) lowerLayer(c *container) map[string]string {
	files := images.Lookup(c.image.ref).Files
	lower := make(map[string]string, len(files)+1)
	for name, data := range files {
		lower[path.Clean("/"+name)] = data
	}
	if sb := s.sandboxes[c.sandboxID]; sb != nil {
		for name, data := range s.sandboxFiles(sb) { // mounted or procfs: not the layer's
			lower[name] = data
		}
	}
	return lower
}

// cpuRate turns cumulative CPU time into usage_nano_cores: the usage
// between the last sample at least a second old and now (or since the
// start, at first), so that two stats calls a moment apart do not divide
// by almost nothing.
type cpuRate struct{ older, newer cpuSample }

type cpuSample struct {
	at    int64  // ns since the epoch
	usage uint64 // cumulative ns of CPU
}

// cpuRateWindow is the shortest window the rate is taken over.
const cpuRateWindow = int64(time.Second)

// observe records usage at now (ns since the epoch) for a record that
// started counting at start, and returns the rate in nanocores.
func (r *cpuRate) observe(start, now int64, usage uint64) uint64 {
	if r.newer.at == 0 {
		r.newer = cpuSample{at: start}
		r.older = r.newer
	}
	base := r.newer
	if now-r.newer.at < cpuRateWindow {
		base = r.older
	}
	if now-r.newer.at >= cpuRateWindow {
		r.older, r.newer = r.newer, cpuSample{at: now, usage: usage}
	}
	if now <= base.at || usage < base.usage {
		return 0
	}
	return uint64(float64(usage-base.usage) / float64(now-base.at) * 1e9)
}
