package stats

import (
	"encoding/json"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Summary renders s as the Summary API (GET /stats/summary): the node,
// then each pod with its containers. onlyCPUAndMemory leaves out the
// filesystems and volumes, as ?only_cpu_and_memory=true does.
func Summary(s *Snapshot, onlyCPUAndMemory bool) *statsapi.Summary {
	n := s.Node
	out := &statsapi.Summary{Node: statsapi.NodeStats{NodeName: n.Name, StartTime: metav1.NewTime(n.StartTime),
		CPU: cpuStats(n.CPU), Memory: memoryStats(n.Memory, n.MemoryBytes)}, Pods: []statsapi.PodStats{}}
	if !onlyCPUAndMemory {
		out.Node.Fs = fsStats(s.Time, n.FsUsedBytes, n.FsCapacityBytes)
		out.Node.Runtime = &statsapi.RuntimeStats{ImageFs: fsStats(s.Time, 0, n.FsCapacityBytes)}
	}
	for _, p := range s.Pods {
		ps := statsapi.PodStats{PodRef: statsapi.PodReference{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			StartTime: metav1.NewTime(p.StartTime), CPU: cpuStats(p.CPU), Memory: memoryStats(p.Memory, 0),
			Containers: []statsapi.ContainerStats{}}
		for _, c := range p.Containers {
			cs := statsapi.ContainerStats{Name: c.Name, StartTime: metav1.NewTime(c.StartTime),
				CPU: cpuStats(c.CPU), Memory: memoryStats(c.Memory, c.MemoryLimitBytes)}
			if !onlyCPUAndMemory {
				cs.Rootfs = fsStats(s.Time, c.RootfsBytes, n.FsCapacityBytes)
			}
			ps.Containers = append(ps.Containers, cs)
		}
		if !onlyCPUAndMemory {
			ps.EphemeralStorage = fsStats(s.Time, p.EphemeralStorageBytes(), n.FsCapacityBytes)
			for name, used := range p.Volumes {
				ps.VolumeStats = append(ps.VolumeStats, statsapi.VolumeStats{Name: name, FsStats: *fsStats(s.Time, used, n.FsCapacityBytes)})
			}
		}
		out.Pods = append(out.Pods, ps)
	}
	return out
}

func cpuStats(c CPU) *statsapi.CPUStats {
	return &statsapi.CPUStats{Time: metav1.NewTime(c.Time), UsageNanoCores: ptr(c.UsageNanoCores), UsageCoreNanoSeconds: ptr(c.UsageCoreNanoSeconds)}
}

// memoryStats reads m; with a limit (a container's, or the node's
// memory), availableBytes is what is left below it.
func memoryStats(m Memory, limit uint64) *statsapi.MemoryStats {
	out := &statsapi.MemoryStats{Time: metav1.NewTime(m.Time), UsageBytes: ptr(m.UsageBytes),
		WorkingSetBytes: ptr(m.WorkingSetBytes), RSSBytes: ptr(m.RSSBytes)}
	if limit > 0 {
		out.AvailableBytes = ptr(limit - min(limit, m.WorkingSetBytes))
	}
	return out
}

// fsStats is used bytes on a filesystem of capacity bytes (the node's
// ephemeral storage); mkube counts no inodes.
func fsStats(at time.Time, used, capacity uint64) *statsapi.FsStats {
	return &statsapi.FsStats{Time: metav1.NewTime(at), UsedBytes: ptr(used), CapacityBytes: ptr(capacity),
		AvailableBytes: ptr(capacity - min(capacity, used))}
}

func ptr(v uint64) *uint64 { return &v }

// ServeSummary answers GET /stats/summary from the node's provider.
func (p *Provider) ServeSummary(w http.ResponseWriter, r *http.Request) {
	snap, err := p.Snapshot(r.Context())
	if err != nil {
		http.Error(w, "failed to get node info: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(Summary(snap, r.URL.Query().Get("only_cpu_and_memory") == "true"))
}
