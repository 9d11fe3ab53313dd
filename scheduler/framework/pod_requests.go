package framework

import (
	"strings"

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
// (spec.resources.requests), the cpu, memory and hugepages it names replace
// the containers' sum. spec.overhead, set from the pod's RuntimeClass, is
// added last.
//
// Worked example: containers app (cpu 500m, memory 256Mi) and log
// (cpu 250m), one init container (cpu 1, memory 128Mi), overhead cpu 100m:
//
//	cpu    = max(500m+250m, 1000m) + 100m = 1100m
//	memory = max(256Mi, 128Mi)            = 256Mi
func PodRequests(pod *corev1.Pod) Resource { return podRequests(pod, defaults{}) }

// NonZeroPodRequests is PodRequests with every container that leaves cpu or
// memory out counted at DefaultMilliCPURequest / DefaultMemoryRequest: what
// the scoring plugins use. In the example above the log container counts
// 200Mi of memory, so memory = max(256Mi+200Mi, 128Mi) = 456Mi.
//
// A pod with pod-level requests is the exception (kube-scheduler's
// getNonMissingContainerRequests): its own requests stand for its
// containers', so a default fills in only cpu or memory that nothing in the
// pod names, neither the pod, a container nor the overhead. With pod-level
// memory 1Gi and containers web (cpu 500m) and log (no requests), cpu
// counts 500m, not 600m, and memory 1Gi.
func NonZeroPodRequests(pod *corev1.Pod) Resource {
	d := defaults{cpu: true, memory: true}
	if hasPodLevelRequests(pod) {
		d = defaults{cpu: !namesRequest(pod, corev1.ResourceCPU), memory: !namesRequest(pod, corev1.ResourceMemory)}
	}
	return podRequests(pod, d)
}

// defaults says which requests a container that leaves them out counts at
// their default.
type defaults struct{ cpu, memory bool }

func podRequests(pod *corev1.Pod, d defaults) Resource {
	var reqs Resource
	for i := range pod.Spec.Containers {
		reqs.Add(containerRequests(&pod.Spec.Containers[i], d))
	}
	var sidecars, initMax Resource
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		r := containerRequests(c, d)
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
		for name, q := range pod.Spec.Resources.Requests {
			switch {
			case name == corev1.ResourceCPU:
				reqs.MilliCPU = q.MilliValue()
			case name == corev1.ResourceMemory:
				reqs.Memory = q.Value()
			case isHugePages(name):
				reqs.SetScalar(name, q.Value())
			}
		}
	}
	reqs.AddList(pod.Spec.Overhead)
	return reqs
}

// containerRequests is one container's requests, with a missing cpu or
// memory request counted at its default where d says so. An explicit 0
// stays 0, as in Kubernetes.
func containerRequests(c *corev1.Container, d defaults) Resource {
	r := NewResource(c.Resources.Requests)
	if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok && d.cpu {
		r.MilliCPU = DefaultMilliCPURequest
	}
	if _, ok := c.Resources.Requests[corev1.ResourceMemory]; !ok && d.memory {
		r.Memory = DefaultMemoryRequest
	}
	return r
}

// hasPodLevelRequests: spec.resources.requests names a resource that may
// be requested per pod (cpu, memory, hugepages); Kubernetes ignores the
// others there.
func hasPodLevelRequests(pod *corev1.Pod) bool {
	if pod.Spec.Resources == nil {
		return false
	}
	for name := range pod.Spec.Resources.Requests {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || isHugePages(name) {
			return true
		}
	}
	return false
}

// namesRequest: the pod, one of its containers or its overhead names a
// request of name, even of 0.
func namesRequest(pod *corev1.Pod, name corev1.ResourceName) bool {
	lists := []corev1.ResourceList{pod.Spec.Overhead}
	if pod.Spec.Resources != nil {
		lists = append(lists, pod.Spec.Resources.Requests)
	}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			lists = append(lists, cs[i].Resources.Requests)
		}
	}
	for _, rl := range lists {
		if _, ok := rl[name]; ok {
			return true
		}
	}
	return false
}

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}
