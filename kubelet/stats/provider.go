package stats

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// Runtime is the CRI calls the provider makes: the node's sandboxes and
// running containers, and their stats.
type Runtime interface {
	ListPodSandbox(ctx context.Context, in *runtimeapi.ListPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error)
	ListContainers(ctx context.Context, in *runtimeapi.ListContainersRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error)
	ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error)
	ListPodSandboxStats(ctx context.Context, in *runtimeapi.ListPodSandboxStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListPodSandboxStatsResponse, error)
}

// The node's own use, beyond its pods': the kubelet, the runtime and the
// system. A node that reported only its pods would read 0 while idle,
// and metrics-server drops a node whose CPU or memory is 0.
const (
	systemNanoCores   = 10_000_000 // 10m
	systemMemoryBytes = 64 << 20
)

// Options are what a Provider reads.
type Options struct {
	Node    string
	Runtime Runtime
	// Selector is the labels of the node's sandboxes and containers
	// (mkube.io/node-name: a fleet's runtime serves many nodes).
	Selector map[string]string
	// Pods are the node's pods: their QoS class and limits.
	Pods func() []*corev1.Pod
	// Capacity is the node's capacity (cpu, memory, ephemeral-storage).
	Capacity corev1.ResourceList
	// Volumes measures a pod's local volumes, bytes by name; nil: none.
	Volumes   func(ctx context.Context, pod *corev1.Pod) map[string]int64
	StartTime time.Time
	Clock     clock.PassiveClock
}

// Provider reads one node's usage from the CRI (upstream's
// cri_stats_provider.go with the summary provider's node totals).
type Provider struct {
	o     Options
	rates *rates
}

// NewProvider returns the provider of the node o names.
func NewProvider(o Options) *Provider { return &Provider{o: o, rates: newRates()} }

// Snapshot reads the node's usage now.
func (p *Provider) Snapshot(ctx context.Context) (*Snapshot, error) {
	sel := p.o.Selector
	sandboxes, err := p.o.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}, LabelSelector: sel}})
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := p.o.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}, LabelSelector: sel}})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	cstats, err := p.o.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{LabelSelector: sel}})
	if err != nil {
		return nil, fmt.Errorf("list container stats: %w", err)
	}
	// Pod-level stats are optional in the CRI (a runtime may answer
	// Unimplemented): without them a pod is the sum of its containers.
	podStats := map[string]*runtimeapi.PodSandboxStats{}
	if resp, err := p.o.Runtime.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{Filter: &runtimeapi.PodSandboxStatsFilter{LabelSelector: sel}}); err == nil {
		for _, ps := range resp.GetStats() {
			podStats[ps.GetAttributes().GetId()] = ps
		}
	}
	now := p.o.Clock.Now()
	b := builder{p: p, now: now, seen: map[string]bool{}, pods: p.podsByKey(),
		byID: map[string]*runtimeapi.Container{}, bySandbox: map[string][]*runtimeapi.ContainerStats{}}
	for _, c := range containers.GetContainers() {
		b.byID[c.GetId()] = c
	}
	for _, st := range cstats.GetStats() {
		if c := b.byID[st.GetAttributes().GetId()]; c != nil {
			b.bySandbox[c.GetPodSandboxId()] = append(b.bySandbox[c.GetPodSandboxId()], st)
		}
	}
	snap := &Snapshot{Time: now}
	for _, sb := range sandboxes.GetItems() {
		snap.Pods = append(snap.Pods, b.pod(ctx, sb, podStats[sb.GetId()]))
	}
	snap.Node = b.node(snap.Pods)
	p.rates.keep(b.seen)
	return snap, nil
}

// podsByKey are the node's pods by "namespace/name", which the sandbox's
// metadata names (a static pod's UID in the runtime is not its mirror's).
func (p *Provider) podsByKey() map[string]*corev1.Pod {
	out := map[string]*corev1.Pod{}
	if p.o.Pods != nil {
		for _, pod := range p.o.Pods() {
			out[pod.Namespace+"/"+pod.Name] = pod
		}
	}
	return out
}
