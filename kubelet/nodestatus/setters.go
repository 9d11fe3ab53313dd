package nodestatus

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/version"
)

// The node status setters (upstream pkg/kubelet/nodestatus/setters.go):
// what the node's status says, computed afresh on every update.

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
	id := MachineID(cfg.NodeName)
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

// NodeReady reports whether the node's Ready condition is True.
func NodeReady(st corev1.NodeStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// MachineID stands in for /etc/machine-id: 32 hex digits, stable per node.
func MachineID(nodeName string) string {
	sum := sha256.Sum256([]byte("mkube-node/" + nodeName))
	return hex.EncodeToString(sum[:16])
}
