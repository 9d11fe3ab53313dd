package noderesources

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// BalancedAllocationName is the plugin's name in kube-scheduler.
const BalancedAllocationName = "NodeResourcesBalancedAllocation"

// BalancedAllocation is seed priority BalancedResourceAllocation ("节点上
// CPU 和 Memory 使用率越接近，权重越高"): it prefers the node whose resources
// would be used in the most equal proportions once the pod is there, so
// that no node runs out of memory with its cpu idle, or the reverse.
//
// Rule, as current Kubernetes computes it, with the pod counted in:
//
//	fraction(r) = min(requested(r) / allocatable(r), 1)      for cpu and memory
//	std         = standard deviation of the fractions
//	            = |fraction(cpu) - fraction(memory)| / 2     for two resources
//	score       = (1 - std) × 100
//
// Requests are counted as requested (a container without requests counts
// nothing here, unlike LeastAllocated), and a pod that requests neither
// cpu nor memory is not scored by this plugin at all (Kubernetes skips
// best-effort pods: every empty node would otherwise look perfectly
// balanced, and they would pile onto it).
//
// Worked example, the seed's: node01 would be at cpu 20%, memory 60%;
// node02 at 50%, 50%.
//
//	node01  std = |0.2 - 0.6| / 2 = 0.2   score = (1 - 0.2) × 100 = 80
//	node02  std = |0.5 - 0.5| / 2 = 0     score = 100              → node02 preferred
//
// "虽然 node01 的总使用率比 node02 低": LeastAllocated prefers node01
// ((80+40)/2 = 60 against 50), which is why the seed says this priority is
// used together with it, not alone; with weight 1 each, node01 totals
// 60+80 = 140 and node02 50+100 = 150.
type BalancedAllocation struct {
	resources []corev1.ResourceName
}

// BalancedAllocationArgs are the plugin's arguments (Kubernetes'
// NodeResourcesBalancedAllocationArgs): the resources to balance; weights
// are accepted and ignored, as in Kubernetes.
type BalancedAllocationArgs struct {
	Resources []ResourceSpec `json:"resources,omitempty"`
}

// NewBalancedAllocation returns the plugin balancing cpu and memory.
func NewBalancedAllocation() *BalancedAllocation {
	return &BalancedAllocation{resources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}}
}

// NewBalancedAllocationWithArgs returns the plugin balancing args.Resources.
func NewBalancedAllocationWithArgs(args BalancedAllocationArgs) (*BalancedAllocation, error) {
	b := NewBalancedAllocation()
	if len(args.Resources) > 0 {
		b.resources = nil
		for _, r := range args.Resources {
			if r.Name == "" {
				return nil, fmt.Errorf("resources: a resource without name")
			}
			b.resources = append(b.resources, r.Name)
		}
	}
	return b, nil
}

func (*BalancedAllocation) Name() string { return BalancedAllocationName }

// PreScore skips best-effort pods.
func (b *BalancedAllocation) PreScore(_ *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo, _ framework.NodeInfoLister) *framework.Status {
	for _, r := range b.resources {
		if requestOf(&pod.Requests, r) > 0 {
			return nil
		}
	}
	return skipBestEffort
}

var skipBestEffort = framework.NewStatus(framework.Skip, "the pod requests no cpu or memory (best-effort)")

// Score is (1 - std of the utilisation fractions) × 100.
func (b *BalancedAllocation) Score(_ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	var buf [4]float64
	fractions := buf[:0]
	for _, r := range b.resources {
		podReq := requestOf(&pod.Requests, r)
		if podReq == 0 && framework.IsScalarResourceName(r) {
			continue // an extended resource the pod does not use is not balanced
		}
		allocatable := requestOf(&node.Allocatable, r)
		if allocatable == 0 {
			continue
		}
		f := float64(requestOf(&node.Requested, r)+podReq) / float64(allocatable)
		fractions = append(fractions, min(f, 1))
	}
	return int64((1 - stdDev(fractions)) * float64(framework.MaxNodeScore)), nil
}

// stdDev is the population standard deviation; 0 for fewer than two
// values.
func stdDev(fractions []float64) float64 {
	switch len(fractions) {
	case 0, 1:
		return 0
	case 2:
		return math.Abs(fractions[0]-fractions[1]) / 2
	}
	var sum float64
	for _, f := range fractions {
		sum += f
	}
	mean := sum / float64(len(fractions))
	var sq float64
	for _, f := range fractions {
		sq += (f - mean) * (f - mean)
	}
	return math.Sqrt(sq / float64(len(fractions)))
}

// requestOf reads one resource of r in the scheduler's units.
func requestOf(r *framework.Resource, name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.MilliCPU
	case corev1.ResourceMemory:
		return r.Memory
	case corev1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	}
	return r.ScalarResources[name]
}
