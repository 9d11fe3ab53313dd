// Package noderesources holds the plugin that accounts for cpu, memory and
// the other resources a pod requests: NodeResourcesFit.
//
// Seed predicate: PodFitsResources ("节点上剩余的资源是否大于 pod 请求的资源").
// Seed priority: LeastRequestedPriority (least_allocated.go). In
// Kubernetes both are the NodeResourcesFit plugin: its Filter is the
// predicate, and its Score, with the LeastAllocated scoring strategy (the
// default), is the priority, which was a plugin of its own,
// NodeResourcesLeastAllocated, until Kubernetes 1.23. The MostAllocated
// strategy (most_allocated.go) packs pods instead of spreading them.
//
// Seed priority BalancedResourceAllocation is this package's second
// plugin, NodeResourcesBalancedAllocation (balanced_allocation.go).
//
// Filter rule, for every resource the pod requests (see
// framework.PodRequests for how a pod's request is summed):
//
//	pod request  <=  node allocatable  -  Σ requests of the pods bound or assumed on the node
//
// and the node must have room for one more pod (status.allocatable.pods).
// Only requests count, never actual usage, and limits play no part.
//
// Worked example: node01 has allocatable cpu 4, memory 8Gi, pods 110; its
// 12 pods request cpu 2.5 and memory 3Gi in total. A pod requesting cpu 2,
// memory 1Gi:
//
//	cpu:    2    > 4 - 2.5 = 1.5   → "Insufficient cpu"
//	memory: 1Gi <= 8Gi - 3Gi = 5Gi → fits
//	pods:   12 + 1 <= 110          → fits
//
// so node01 is rejected with one reason, "Insufficient cpu". A node short
// of both cpu and memory gives two reasons, and the FailedScheduling
// message counts each.
//
// Where things live:
//
//	file                    what it holds
//	fit.go                  the plugin NodeResourcesFit: its args and scoring strategy, PreFilter and Filter (PodFitsResources), Score by the strategy
//	least_allocated.go      LeastAllocated, the default strategy (LeastRequestedPriority)
//	most_allocated.go       MostAllocated, which packs pods instead
//	balanced_allocation.go  the plugin NodeResourcesBalancedAllocation (BalancedResourceAllocation)
package noderesources

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "NodeResourcesFit"

// Reasons, worded as in Kubernetes. Extended resources read
// "Insufficient example.com/foo".
const (
	ReasonTooManyPods = "Too many pods"
)

// ResourceSpec is a resource the score looks at, and its weight.
type ResourceSpec struct {
	Name   corev1.ResourceName `json:"name"`
	Weight int64               `json:"weight,omitempty"`
}

// DefaultResources is what kube-scheduler scores by default: cpu and
// memory, equally.
var DefaultResources = []ResourceSpec{{corev1.ResourceCPU, 1}, {corev1.ResourceMemory, 1}}

// ScoringStrategyType names how Fit scores a node.
type ScoringStrategyType string

// The strategies mkube implements (Kubernetes also has
// RequestedToCapacityRatio).
const (
	LeastAllocated ScoringStrategyType = "LeastAllocated" // spread: the emptiest node wins (the default)
	MostAllocated  ScoringStrategyType = "MostAllocated"  // pack: the fullest node that fits wins
)

// FitArgs are the plugin's arguments in a scheduler configuration
// (Kubernetes' NodeResourcesFitArgs, reduced to the scoring strategy):
//
//	pluginConfig:
//	- name: NodeResourcesFit
//	  args:
//	    scoringStrategy:
//	      type: MostAllocated
//	      resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
type FitArgs struct {
	ScoringStrategy *ScoringStrategy `json:"scoringStrategy,omitempty"`
}

// ScoringStrategy is how Fit scores, and on which resources.
type ScoringStrategy struct {
	Type      ScoringStrategyType `json:"type,omitempty"`
	Resources []ResourceSpec      `json:"resources,omitempty"`
}

// Fit is the plugin: Filter by PodFitsResources, Score by LeastAllocated
// (or MostAllocated).
type Fit struct {
	strategy  ScoringStrategyType
	scorer    func(requested, allocatable int64) int64
	resources []ResourceSpec
}

// New returns the plugin scoring DefaultResources by LeastAllocated.
func New() *Fit {
	return &Fit{strategy: LeastAllocated, scorer: leastRequestedScore, resources: DefaultResources}
}

// NewWithArgs returns the plugin configured by args.
func NewWithArgs(args FitArgs) (*Fit, error) {
	f := New()
	s := args.ScoringStrategy
	if s == nil {
		return f, nil
	}
	switch s.Type {
	case "", LeastAllocated:
	case MostAllocated:
		f.strategy, f.scorer = MostAllocated, mostRequestedScore
	default:
		return nil, fmt.Errorf("scoringStrategy.type %q is not supported (LeastAllocated, MostAllocated)", s.Type)
	}
	if len(s.Resources) > 0 {
		for _, r := range s.Resources {
			if r.Weight <= 0 || r.Weight > 100 {
				return nil, fmt.Errorf("scoringStrategy.resources: weight of %s must be in 1..100, got %d", r.Name, r.Weight)
			}
		}
		f.resources = s.Resources
	}
	return f, nil
}

func (*Fit) Name() string { return Name }

// Filter checks that the node has room for the pod. The status is
// Unschedulable (not Unresolvable): evicting pods would make room, which
// is what preemption tries.
func (*Fit) Filter(_ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	var buf [4]string // room for the usual reasons without a heap allocation
	reasons := insufficientResources(buf[:0], &pod.Requests, node)
	switch len(reasons) {
	case 0:
		return nil
	case 1:
		if st, ok := singleReason[reasons[0]]; ok {
			return st
		}
	}
	return framework.NewStatus(framework.Unschedulable, slices.Clone(reasons)...)
}

// singleReason holds a shared Status for each common lone reason, so the
// usual rejection allocates nothing (see framework.Status.WithPlugin).
var singleReason = map[string]*framework.Status{}

func init() {
	for _, r := range []string{ReasonTooManyPods, "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage"} {
		singleReason[r] = framework.NewStatus(framework.Unschedulable, r).WithPlugin(Name)
	}
}

// insufficientResources appends to reasons why the pod does not fit, in
// Kubernetes' order: pods, cpu, memory, ephemeral-storage, then the scalar
// resources. A resource the pod does not request is never insufficient,
// even on an overcommitted node.
func insufficientResources(reasons []string, req *framework.Resource, node *framework.NodeInfo) []string {
	alloc, used := &node.Allocatable, &node.Requested
	if int64(len(node.Pods))+1 > alloc.AllowedPodNumber {
		reasons = append(reasons, ReasonTooManyPods)
	}
	if req.MilliCPU > 0 && req.MilliCPU > alloc.MilliCPU-used.MilliCPU {
		reasons = append(reasons, "Insufficient cpu")
	}
	if req.Memory > 0 && req.Memory > alloc.Memory-used.Memory {
		reasons = append(reasons, "Insufficient memory")
	}
	if req.EphemeralStorage > 0 && req.EphemeralStorage > alloc.EphemeralStorage-used.EphemeralStorage {
		reasons = append(reasons, "Insufficient ephemeral-storage")
	}
	for name, n := range req.ScalarResources {
		if n > 0 && n > alloc.ScalarResources[name]-used.ScalarResources[name] {
			reasons = append(reasons, fmt.Sprintf("Insufficient %s", name))
		}
	}
	return reasons
}

// EventsToRegister: room appears when a node is added or grows, or when a
// bound pod goes away (deleted, or finished: Succeeded and Failed pods
// leave the scheduler's view).
func (*Fit) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable},
		{Resource: framework.AssignedPod, ActionType: framework.Delete},
	}
}

// Score rates the node by its strategy (least_allocated.go,
// most_allocated.go), a weighted mean over the resources.
func (f *Fit) Score(_ *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	var score, weights int64
	for _, r := range f.resources {
		requested, allocatable := amounts(pod, node, r.Name)
		if allocatable == 0 {
			continue // the node does not offer it: it neither helps nor hurts
		}
		score += f.scorer(requested, allocatable) * r.Weight
		weights += r.Weight
	}
	if weights == 0 {
		return 0, nil
	}
	return score / weights, nil
}

// amounts is what the node would have requested of resource if the pod
// were added, and its allocatable. For cpu and memory, pods that request
// nothing count the non-zero defaults (framework.DefaultMilliCPURequest).
func amounts(pod *framework.PodInfo, node *framework.NodeInfo, resource corev1.ResourceName) (requested, allocatable int64) {
	switch resource {
	case corev1.ResourceCPU:
		return node.NonZeroRequested.MilliCPU + pod.NonZeroRequests.MilliCPU, node.Allocatable.MilliCPU
	case corev1.ResourceMemory:
		return node.NonZeroRequested.Memory + pod.NonZeroRequests.Memory, node.Allocatable.Memory
	case corev1.ResourceEphemeralStorage:
		return node.Requested.EphemeralStorage + pod.Requests.EphemeralStorage, node.Allocatable.EphemeralStorage
	}
	return node.Requested.ScalarResources[resource] + pod.Requests.ScalarResources[resource], node.Allocatable.ScalarResources[resource]
}
