package framework

import (
	corev1 "k8s.io/api/core/v1"
)

// Kubernetes' stand-ins for a container that requests no cpu or no memory
// (DefaultMilliCPURequest and DefaultMemoryRequest in kube-scheduler).
// They are used only to spread pods when scoring: without them, ten
// BestEffort pods would all score a node as empty and pile onto it. They
// are never used to decide whether a pod fits.
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

// PodRequests is what a pod asks of its node, counted as Kubernetes counts
// it (k8s.io/component-helpers resource.PodRequests):
//
//	requests = max( sum(containers) + sum(sidecars),
//	                max over init containers i of (init_i + sidecars started before i) )
//	           + overhead
//
// Init containers run one at a time before the app containers, so only the
// largest one matters; sidecars (init containers with restartPolicy Always)
// keep running, so they add up. If the pod sets pod-level resources
// (spec.resources.requests), its cpu and memory replace the containers' sum.
// spec.overhead, set from the pod's RuntimeClass, is added last.
//
// Worked example: containers app (cpu 500m, memory 256Mi) and log
// (cpu 250m), one init container (cpu 1, memory 128Mi), overhead cpu 100m:
//
//	cpu    = max(500m+250m, 1000m) + 100m = 1100m
//	memory = max(256Mi, 128Mi)            = 256Mi
func PodRequests(pod *corev1.Pod) Resource { return podRequests(pod, false) }

// NonZeroPodRequests is PodRequests with every container that leaves cpu or
// memory out counted at DefaultMilliCPURequest / DefaultMemoryRequest: what
// the scoring plugins use. In the example above the log container counts
// 200Mi of memory, so memory = max(256Mi+200Mi, 128Mi) = 456Mi.
func NonZeroPodRequests(pod *corev1.Pod) Resource { return podRequests(pod, true) }

func podRequests(pod *corev1.Pod, nonZero bool) Resource {
	var reqs Resource
	for i := range pod.Spec.Containers {
		reqs.Add(containerRequests(&pod.Spec.Containers[i], nonZero))
	}
	var sidecars, initMax Resource
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		r := containerRequests(c, nonZero)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			// A sidecar runs alongside everything started after it.
			reqs.Add(r)
			sidecars.Add(r)
			initMax.SetMax(sidecars)
			continue
		}
		r.Add(sidecars)
		initMax.SetMax(r)
	}
	reqs.SetMax(initMax)

	// Pod-level resources (the PodLevelResources feature) override the
	// containers' sum for the resources they name.
	if pod.Spec.Resources != nil {
		if q, ok := pod.Spec.Resources.Requests[corev1.ResourceCPU]; ok {
			reqs.MilliCPU = q.MilliValue()
			if nonZero && reqs.MilliCPU == 0 {
				reqs.MilliCPU = DefaultMilliCPURequest
			}
		}
		if q, ok := pod.Spec.Resources.Requests[corev1.ResourceMemory]; ok {
			reqs.Memory = q.Value()
			if nonZero && reqs.Memory == 0 {
				reqs.Memory = DefaultMemoryRequest
			}
		}
	}
	reqs.AddList(pod.Spec.Overhead)
	return reqs
}

// containerRequests is one container's requests; with nonZero, a missing
// cpu or memory request counts at its default. An explicit 0 stays 0, as
// in Kubernetes.
func containerRequests(c *corev1.Container, nonZero bool) Resource {
	r := NewResource(c.Resources.Requests)
	if nonZero {
		if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
			r.MilliCPU = DefaultMilliCPURequest
		}
		if _, ok := c.Resources.Requests[corev1.ResourceMemory]; !ok {
			r.Memory = DefaultMemoryRequest
		}
	}
	return r
}
