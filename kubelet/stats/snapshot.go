package stats

import "time"

// A Snapshot is one node's usage at one moment, read from the CRI: what
// the Summary API (summary.go) and the Prometheus endpoints of package
// kubelet/metrics each render in their own shape.
type Snapshot struct {
	Time time.Time
	Node NodeUsage
	Pods []PodUsage
}

// CPU is cumulative core-nanoseconds and, once two samples are known, the
// rate between them in nanocores (the Summary API's usageNanoCores).
type CPU struct {
	Time                 time.Time
	UsageCoreNanoSeconds uint64
	UsageNanoCores       uint64
}

// Memory is what cgroup v2's memory.current and memory.stat say, as the
// CRI reports them.
type Memory struct {
	Time            time.Time
	WorkingSetBytes uint64
	UsageBytes      uint64
	RSSBytes        uint64
}

// NodeUsage is the node's totals: its pods' sums plus the system's own
// (systemCPU, systemMemory), and what the node has.
type NodeUsage struct {
	Name      string
	StartTime time.Time
	CPU       CPU
	Memory    Memory
	// Cores and MemoryBytes are the node's capacity (machine_cpu_cores,
	// machine_memory_bytes, availableBytes).
	Cores       float64
	MemoryBytes uint64
	// FsCapacityBytes is its ephemeral-storage capacity; FsUsedBytes what
	// its containers and local volumes hold.
	FsCapacityBytes uint64
	FsUsedBytes     uint64
}

// PodUsage is a pod's sandbox and containers.
type PodUsage struct {
	Name, Namespace, UID string
	// QOSClass is the pod's status.qosClass, which names its cgroup
	// (kubepods/burstable/pod<uid>); "" if the kubelet no longer has it.
	QOSClass   string
	StartTime  time.Time
	CPU        CPU
	Memory     Memory
	Containers []ContainerUsage
	// Volumes are its local volumes' bytes, by name.
	Volumes map[string]uint64
}

// EphemeralStorageBytes is what the pod holds on the node's disk: its
// containers' writable layers and its local volumes.
func (p PodUsage) EphemeralStorageBytes() uint64 {
	var n uint64
	for _, c := range p.Containers {
		n += c.RootfsBytes
	}
	for _, b := range p.Volumes {
		n += b
	}
	return n
}

// ContainerUsage is one running container.
type ContainerUsage struct {
	Name, ID, Image string
	StartTime       time.Time
	CPU             CPU
	Memory          Memory
	RootfsBytes     uint64
	// Limits from the pod's spec, as the runtime set them on the cgroup:
	// CFS quota and period in microseconds (0: no limit) and the memory
	// limit (0: none).
	CPUQuota, CPUPeriod int64
	MemoryLimitBytes    uint64
	Throttling          Throttling
}

// Throttling is what cgroup v2's cpu.stat counts for a container with a
// CPU limit: periods elapsed, periods in which it hit its quota, and the
// time it spent throttled.
type Throttling struct {
	Periods, ThrottledPeriods uint64
	ThrottledSeconds          float64
}
