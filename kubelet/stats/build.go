package stats

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// cfsPeriod is the CFS period the kubelet sets with a CPU limit (100 ms).
const cfsPeriod = 100_000

// builder turns one round of CRI answers into a Snapshot.
type builder struct {
	p         *Provider
	now       time.Time
	seen      map[string]bool // rate IDs read this round
	pods      map[string]*corev1.Pod
	byID      map[string]*runtimeapi.Container
	bySandbox map[string][]*runtimeapi.ContainerStats
}

// pod is one sandbox's usage; ps is the runtime's pod-level stats, nil
// if it has none.
func (b *builder) pod(ctx context.Context, sb *runtimeapi.PodSandbox, ps *runtimeapi.PodSandboxStats) PodUsage {
	md := sb.GetMetadata()
	pu := PodUsage{Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid(), StartTime: time.Unix(0, sb.GetCreatedAt())}
	pod := b.pods[pu.Namespace+"/"+pu.Name]
	if pod != nil {
		pu.QOSClass = string(pod.Status.QOSClass)
		if b.p.o.Volumes != nil {
			pu.Volumes = map[string]uint64{}
			for name, n := range b.p.o.Volumes(ctx, pod) {
				pu.Volumes[name] = uint64(n)
			}
		}
	}
	for _, st := range b.bySandbox[sb.GetId()] {
		pu.Containers = append(pu.Containers, b.container(st, pod))
	}
	if linux := ps.GetLinux(); linux != nil && linux.GetCpu() != nil {
		pu.CPU, _ = b.cpu("pod/"+sb.GetId(), linux.GetCpu(), 0, 0)
		pu.Memory = memory(linux.GetMemory(), b.now)
		return pu
	}
	pu.CPU, pu.Memory = CPU{Time: b.now}, Memory{Time: b.now}
	for _, c := range pu.Containers {
		pu.CPU.UsageCoreNanoSeconds += c.CPU.UsageCoreNanoSeconds
		pu.CPU.UsageNanoCores += c.CPU.UsageNanoCores
		pu.Memory.WorkingSetBytes += c.Memory.WorkingSetBytes
		pu.Memory.UsageBytes += c.Memory.UsageBytes
		pu.Memory.RSSBytes += c.Memory.RSSBytes
	}
	return pu
}

// container is one running container's usage; pod (nil if unknown)
// gives its limits.
func (b *builder) container(st *runtimeapi.ContainerStats, pod *corev1.Pod) ContainerUsage {
	id := st.GetAttributes().GetId()
	c := b.byID[id]
	cu := ContainerUsage{Name: st.GetAttributes().GetMetadata().GetName(), ID: id, Image: c.GetImage().GetImage(),
		StartTime: time.Unix(0, c.GetCreatedAt()), RootfsBytes: st.GetWritableLayer().GetUsedBytes().GetValue()}
	if pod != nil {
		for _, spec := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			if spec.Name != cu.Name {
				continue
			}
			if cpu, ok := spec.Resources.Limits[corev1.ResourceCPU]; ok && !cpu.IsZero() {
				cu.CPUQuota, cu.CPUPeriod = cpu.MilliValue()*cfsPeriod/1000, cfsPeriod
			}
			if mem, ok := spec.Resources.Limits[corev1.ResourceMemory]; ok {
				cu.MemoryLimitBytes = uint64(mem.Value())
			}
		}
	}
	cu.CPU, cu.Throttling = b.cpu(id, st.GetCpu(), cu.CPUQuota, cu.CPUPeriod)
	cu.Memory = memory(st.GetMemory(), b.now)
	return cu
}

// cpu reads a CRI CpuUsage, with its rate: the runtime's if it gives
// one, else from the kubelet's previous sample; and, with a CFS quota,
// the throttling estimated so far.
func (b *builder) cpu(id string, u *runtimeapi.CpuUsage, quota, period int64) (CPU, Throttling) {
	out := CPU{Time: b.now, UsageCoreNanoSeconds: u.GetUsageCoreNanoSeconds().GetValue()}
	if u.GetTimestamp() != 0 {
		out.Time = time.Unix(0, u.GetTimestamp())
	}
	b.seen[id] = true
	rate, throttling := b.p.rates.observe(id, out.Time, out.UsageCoreNanoSeconds, quota, period)
	out.UsageNanoCores = rate
	if u.GetUsageNanoCores() != nil {
		out.UsageNanoCores = u.GetUsageNanoCores().GetValue()
	}
	return out, throttling
}

// memory reads a CRI MemoryUsage.
func memory(u *runtimeapi.MemoryUsage, now time.Time) Memory {
	out := Memory{Time: now, WorkingSetBytes: u.GetWorkingSetBytes().GetValue(),
		UsageBytes: u.GetUsageBytes().GetValue(), RSSBytes: u.GetRssBytes().GetValue()}
	if u.GetTimestamp() != 0 {
		out.Time = time.Unix(0, u.GetTimestamp())
	}
	return out
}

// node is the node's totals: its pods plus the system's share, whose
// CPU accumulates from the node's start.
func (b *builder) node(pods []PodUsage) NodeUsage {
	o := b.p.o
	n := NodeUsage{Name: o.Node, StartTime: o.StartTime, CPU: CPU{Time: b.now, UsageNanoCores: systemNanoCores},
		Memory: Memory{Time: b.now, WorkingSetBytes: systemMemoryBytes, UsageBytes: systemMemoryBytes, RSSBytes: systemMemoryBytes}}
	if up := b.now.Sub(o.StartTime); up > 0 {
		n.CPU.UsageCoreNanoSeconds = uint64(up.Seconds() * systemNanoCores)
	}
	n.Cores = float64(o.Capacity.Cpu().MilliValue()) / 1000
	n.MemoryBytes = uint64(o.Capacity.Memory().Value())
	n.FsCapacityBytes = uint64(o.Capacity.StorageEphemeral().Value())
	for _, p := range pods {
		n.CPU.UsageCoreNanoSeconds += p.CPU.UsageCoreNanoSeconds
		n.CPU.UsageNanoCores += p.CPU.UsageNanoCores
		n.Memory.WorkingSetBytes += p.Memory.WorkingSetBytes
		n.Memory.UsageBytes += p.Memory.UsageBytes
		n.Memory.RSSBytes += p.Memory.RSSBytes
		n.FsUsedBytes += p.EphemeralStorageBytes()
	}
	return n
}
