package kubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/kuberuntime"
)

// In-place pod resize, the kubelet's half (the API server's is
// pods/resize, apiserver/registry/core/pod_resize.go). The kubelet keeps
// what it allocated to each pod, the containers' resources it admitted
// (admission.go's admitted pods). When the spec asks for other
// resources:
//
//  1. allocation: the new requests must fit the node beside its other
//     pods. If they could never fit, the resize is Infeasible; if they do
//     not fit now, Deferred: either way the pod keeps what it has and
//     says why in a PodResizePending condition, and a Deferred resize is
//     tried again --sync-frequency later. If they fit, they are the pod's
//     allocation from now on.
//  2. actuation: each running container whose cgroup settings are not
//     its allocated resources' (kubelet/kuberuntime's ContainerResources)
//     is given them by the runtime's UpdateContainerResources, without a
//     restart, unless its resizePolicy says RestartContainer for a
//     resource that changed: then it is restarted with them
//     (restartCount + 1).
//  3. status: containerStatuses[].allocatedResources are the allocated
//     requests, .resources what the runtime reports the container has; a
//     PodResizeInProgress condition stays while the two differ.
//
// Worked example, `kubectl patch pod web --subresource resize -p
// '{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"200m"}}}]}}'`
// on a pod that requested 100m: generation 2 → allocated 200m → the
// runtime's cpu.weight goes from 4 to 8 → status.resources 200m,
// observedGeneration 2, no resize condition.

// resizeContainer gives running container cur the cgroup settings of c's
// (allocated) resources, if it has others. It reports whether c must be
// restarted instead, as its resizePolicy says.
func (k *Kubelet) resizeContainer(ctx context.Context, pod *corev1.Pod, c corev1.Container, cur *kubecontainer.Container) (restart bool, err error) {
	want, have := kuberuntime.ContainerResources(c), cur.Resources
	if have == nil || sameCgroup(want, have) {
		return false, nil
	}
	cpuChanged := want.GetCpuShares() != have.GetCpuShares() || want.GetCpuQuota() != have.GetCpuQuota()
	memChanged := want.GetMemoryLimitInBytes() != have.GetMemoryLimitInBytes()
	for _, p := range c.ResizePolicy {
		if p.RestartPolicy == corev1.RestartContainer &&
			(p.ResourceName == corev1.ResourceCPU && cpuChanged || p.ResourceName == corev1.ResourceMemory && memChanged) {
			return true, nil
		}
	}
	if _, err := k.runtime.runtime.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{
		ContainerId: cur.RawID, Linux: want}); err != nil {
		return false, fmt.Errorf("resize container %s: %w", c.Name, err)
	}
	k.log.Info("resized container in place", "pod", client.KeyOf(pod), "container", c.Name,
		"cpuShares", want.GetCpuShares(), "cpuQuota", want.GetCpuQuota(), "memoryLimit", want.GetMemoryLimitInBytes())
	return false, nil
}

// sameCgroup compares what kuberuntime.ContainerResources sets.
func sameCgroup(a, b *runtimeapi.LinuxContainerResources) bool {
	return a.GetCpuShares() == b.GetCpuShares() && a.GetCpuQuota() == b.GetCpuQuota() &&
		a.GetCpuPeriod() == b.GetCpuPeriod() && a.GetMemoryLimitInBytes() == b.GetMemoryLimitInBytes()
}

// setResourceStatus fills what the pod's status says of its resources:
// each container's allocated requests and actual resources, and the
// resize conditions (pending: why a resize waits; in progress: while a
// running container's settings are not its allocation's).
func setResourceStatus(st *corev1.PodStatus, alloc *corev1.Pod, sb *kubecontainer.PodSandbox, pending *corev1.PodCondition, now metav1.Time) {
	inProgress := false
	fill := func(statuses []corev1.ContainerStatus, containers []corev1.Container) {
		for i := range statuses {
			cs := &statuses[i]
			if i >= len(containers) || containers[i].Name != cs.Name {
				continue
			}
			c := containers[i]
			cs.AllocatedResources = nil
			if len(c.Resources.Requests) > 0 {
				cs.AllocatedResources = c.Resources.Requests.DeepCopy()
			}
			var rc *kubecontainer.Container
			if sb != nil {
				rc = sb.Containers[c.Name]
			}
			cs.Resources = nil
			if rc == nil || rc.Resources == nil || rc.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
				continue
			}
			cs.Resources = actualResources(c, rc.Resources)
			inProgress = inProgress || !sameCgroup(kuberuntime.ContainerResources(c), rc.Resources)
		}
	}
	fill(st.InitContainerStatuses, alloc.Spec.InitContainers)
	fill(st.ContainerStatuses, alloc.Spec.Containers)
	var conds []corev1.PodCondition
	var old []corev1.PodCondition
	for _, c := range st.Conditions {
		if c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
			old = append(old, c)
		} else {
			conds = append(conds, c)
		}
	}
	add := func(c corev1.PodCondition) {
		c.ObservedGeneration, c.LastTransitionTime = alloc.Generation, now
		for _, o := range old {
			if o.Type == c.Type && o.Reason == c.Reason {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		conds = append(conds, c)
	}
	if pending != nil {
		add(*pending)
	}
	if inProgress {
		add(corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue})
	}
	st.Conditions = conds
}

// actualResources are a running container's cpu and memory as its
// cgroup settings have them, in the units of c's allocated resources
// where they agree (a 1m request is 2 shares, as 2m is: c's own value is
// reported); the memory request, which no cgroup setting holds, is the
// allocated one.
func actualResources(c corev1.Container, have *runtimeapi.LinuxContainerResources) *corev1.ResourceRequirements {
	want := kuberuntime.ContainerResources(c)
	out := &corev1.ResourceRequirements{}
	put := func(list *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
	}
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		if have.GetCpuShares() != want.GetCpuShares() {
			q = *resource.NewMilliQuantity(have.GetCpuShares()*1000/1024, resource.DecimalSI)
		}
		put(&out.Requests, corev1.ResourceCPU, q)
	}
	if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
		put(&out.Requests, corev1.ResourceMemory, q)
	}
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		if have.GetCpuQuota() != want.GetCpuQuota() && have.GetCpuPeriod() > 0 {
			q = *resource.NewMilliQuantity(have.GetCpuQuota()*1000/have.GetCpuPeriod(), resource.DecimalSI)
		}
		put(&out.Limits, corev1.ResourceCPU, q)
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		if have.GetMemoryLimitInBytes() != want.GetMemoryLimitInBytes() {
			q = *resource.NewQuantity(have.GetMemoryLimitInBytes(), resource.BinarySI)
		}
		put(&out.Limits, corev1.ResourceMemory, q)
	}
	return out
}
