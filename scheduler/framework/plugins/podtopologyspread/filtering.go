package podtopologyspread

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/scheduler/framework"
)

// The two rejections, shared. A node without the topology label stays
// without it whatever pods go (Unresolvable); a skew may shrink if pods
// are evicted from the node's domain (Unschedulable: preemption may help).
var (
	errMissingLabel = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch).WithPlugin(Name)
	errSkew         = framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch).WithPlugin(Name)
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

var skipFilter = framework.NewStatus(framework.Skip, "the pod has no DoNotSchedule topology spread constraint")

// preFilterState is what PreFilter counts once for every Filter call.
type preFilterState struct {
	spreads   []hardSpread
	namespace string        // the pod's: only its pods count
	inclusion nodeInclusion // which nodes count, for AddPod and RemovePod
}

// hardSpread is one DoNotSchedule constraint and its counts.
type hardSpread struct {
	constraint
	self int // 1 if the pod matches the selector: it adds itself to the domain it lands in
	domainCounts
}

// PreFilter counts, for each DoNotSchedule constraint, the pods it
// selects in each domain, over every node with all the constraints' keys
// that the node inclusion policies take in. O(nodes + matching pods).
func (pl *PodTopologySpread) PreFilter(state *framework.CycleState, pod *framework.PodInfo, nodes framework.NodeInfoLister) *framework.Status {
	cs, err := pl.constraintsOf(pod.Pod, corev1.DoNotSchedule)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("obtaining pod's hard topology spread constraints: %w", err))
	}
	if len(cs) == 0 {
		return skipFilter
	}
	s := &preFilterState{spreads: make([]hardSpread, len(cs)), namespace: pod.Pod.Namespace, inclusion: newNodeInclusion(pod.Pod, cs)}
	for i := range cs {
		s.spreads[i].constraint = cs[i]
		if cs[i].selector.Matches(labels.Set(pod.Pod.Labels)) {
			s.spreads[i].self = 1
		}
		s.spreads[i].pods = map[string]int{}
	}
	for _, n := range nodes.List() {
		node := n.Node()
		if !hasAllKeys(node.Labels, cs) {
			continue
		}
		matchesAffinity, toleratesTaints := s.inclusion.check(node)
		for i := range s.spreads {
			if sp := &s.spreads[i]; sp.includes(matchesAffinity, toleratesTaints) {
				// A domain with no matching pod is a domain too: it is the
				// global minimum, 0.
				sp.pods[node.Labels[sp.topologyKey]] += sp.countOn(n, s.namespace)
			}
		}
	}
	for i := range s.spreads {
		s.spreads[i].tally()
	}
	state.Write(preFilterStateKey, s)
	return nil
}

// Filter checks every DoNotSchedule constraint on one node:
// count(domain) + self - globalMin ≤ maxSkew.
func (pl *PodTopologySpread) Filter(state *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err) // needs the whole cluster: PreFilter must run
	}
	nodeLabels := node.Node().Labels
	for i := range s.spreads {
		sp := &s.spreads[i]
		value, ok := nodeLabels[sp.topologyKey]
		if !ok {
			return errMissingLabel
		}
		if sp.pods[value]+sp.self-sp.globalMin(sp.minDomains) > int(sp.maxSkew) {
			return errSkew
		}
	}
	return nil
}

// AddPod and RemovePod keep PreFilter's counts true while preemption
// takes pods off a node and puts some back, or a nominated pod is counted
// on a node (framework.PreFilterExtensions): O(constraints) per pod.
//
// Example: maxSkew 1 by zone, zone a runs web-1 and web-2 (priority 0),
// zone b web-3; a new web pod of priority 1000 is rejected in zone a
// (2 + 1 - 1 = 2). Preemption takes web-1 off a clone of its node:
// RemovePod brings zone a to 1, 1 + 1 - 1 = 1, and the node fits.
func (pl *PodTopologySpread) AddPod(state *framework.CycleState, _, podToAdd *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	return updateWithPod(state, podToAdd.Pod, node.Node(), +1)
}

// RemovePod: see AddPod.
func (pl *PodTopologySpread) RemovePod(state *framework.CycleState, _, podToRemove *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	return updateWithPod(state, podToRemove.Pod, node.Node(), -1)
}

// updateWithPod adds p (delta +1) to, or takes it (-1) from, each count it
// is in, by the rules PreFilter counted with.
func updateWithPod(state *framework.CycleState, p *corev1.Pod, node *corev1.Node, delta int) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	if p.Namespace != s.namespace || p.DeletionTimestamp != nil {
		return nil
	}
	for i := range s.spreads {
		if _, ok := node.Labels[s.spreads[i].topologyKey]; !ok {
			return nil // PreFilter did not count this node either
		}
	}
	matchesAffinity, toleratesTaints := s.inclusion.check(node)
	for i := range s.spreads {
		sp := &s.spreads[i]
		if sp.includes(matchesAffinity, toleratesTaints) && sp.countsPod(p) {
			sp.move(node.Labels[sp.topologyKey], delta)
		}
	}
	return nil
}

// countsPod: what countOn counts, for one pod of the right namespace.
func (c *constraint) countsPod(p *corev1.Pod) bool {
	return !c.selector.Empty() && c.selector.Matches(labels.Set(p.Labels))
}

// Clone copies the counts, which AddPod and RemovePod change; the
// constraints are never written after PreFilter.
func (s *preFilterState) Clone() framework.StateData {
	c := *s
	c.spreads = slices.Clone(s.spreads)
	for i := range c.spreads {
		c.spreads[i].pods = maps.Clone(s.spreads[i].pods)
		c.spreads[i].domainsWith = maps.Clone(s.spreads[i].domainsWith)
	}
	return &c
}
