package framework

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Resource is an amount of every resource the scheduler accounts for, in
// the units it compares: millicores of cpu, bytes of memory and of
// ephemeral storage, a number of pods, and integer amounts of the "scalar"
// resources (extended resources such as nvidia.com/gpu, hugepages-2Mi).
//
// It is used for three things: a node's allocatable, the sum of the
// requests of the pods on a node, and one pod's requests.
//
// A Resource copied by assignment shares its ScalarResources map; use Clone
// before changing a copy.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// AllowedPodNumber is only meaningful for allocatable: how many pods the
	// kubelet accepts (status.allocatable.pods, 110 by default).
	AllowedPodNumber int64
	ScalarResources  map[corev1.ResourceName]int64
}

// NewResource converts a ResourceList (requests, allocatable...).
func NewResource(rl corev1.ResourceList) Resource {
	var r Resource
	r.AddList(rl)
	return r
}

// AddList adds every quantity of rl. Names the scheduler does not account
// for (an unprefixed name other than cpu, memory, ephemeral-storage and
// pods) are ignored, as in Kubernetes.
func (r *Resource) AddList(rl corev1.ResourceList) {
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.Memory += q.Value()
		case corev1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		case corev1.ResourcePods:
			r.AllowedPodNumber += q.Value()
		default:
			if IsScalarResourceName(name) {
				r.AddScalar(name, q.Value())
			}
		}
	}
}

// IsScalarResourceName reports whether the scheduler counts name as a scalar
// resource: hugepages-<size>, or a domain-prefixed name (example.com/foo,
// nvidia.com/gpu, kubernetes.io/...) that is not a quota "requests." name.
func IsScalarResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) {
		return true
	}
	return strings.Contains(s, "/") && !strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

// AddScalar adds n of a scalar resource.
func (r *Resource) AddScalar(name corev1.ResourceName, n int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = map[corev1.ResourceName]int64{}
	}
	r.ScalarResources[name] += n
}

// SetScalar sets the amount of a scalar resource to n.
func (r *Resource) SetScalar(name corev1.ResourceName, n int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = map[corev1.ResourceName]int64{}
	}
	r.ScalarResources[name] = n
}

// Add adds o to r.
func (r *Resource) Add(o Resource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.AllowedPodNumber += o.AllowedPodNumber
	for name, n := range o.ScalarResources {
		r.AddScalar(name, n)
	}
}

// Sub subtracts o from r: a pod leaving a node.
func (r *Resource) Sub(o Resource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.AllowedPodNumber -= o.AllowedPodNumber
	for name, n := range o.ScalarResources {
		r.AddScalar(name, -n)
		if r.ScalarResources[name] == 0 {
			delete(r.ScalarResources, name)
		}
	}
}

// SetMax raises every amount of r to at least o's.
func (r *Resource) SetMax(o Resource) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	r.AllowedPodNumber = max(r.AllowedPodNumber, o.AllowedPodNumber)
	for name, n := range o.ScalarResources {
		if n > r.ScalarResources[name] {
			if r.ScalarResources == nil {
				r.ScalarResources = map[corev1.ResourceName]int64{}
			}
			r.ScalarResources[name] = n
		}
	}
}

// Clone returns a copy that shares nothing with r.
func (r Resource) Clone() Resource {
	out := r
	out.ScalarResources = nil
	for name, n := range r.ScalarResources {
		out.AddScalar(name, n)
	}
	return out
}

// IsZero reports whether r asks for nothing at all.
func (r Resource) IsZero() bool {
	if r.MilliCPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 || r.AllowedPodNumber != 0 {
		return false
	}
	for _, n := range r.ScalarResources {
		if n != 0 {
			return false
		}
	}
	return true
}
