package interpodaffinity

import (
	"maps"

	"github.com/mkube/mkube/scheduler/framework"
)

// AddPod and RemovePod keep PreFilter's counts true while preemption takes
// pods off a node and puts some back, or a nominated pod is counted on a
// node (framework.PreFilterExtensions): each count a pod contributed
// through the node's topology labels is added or taken back, O(terms),
// instead of recounting the cluster.
//
// Example: web has a required anti-affinity to app=batch by hostname, and
// node01 runs batch-1 (priority 0). PreFilter counts {hostname=node01: 1},
// so Filter rejects node01 with "node(s) didn't match pod anti-affinity
// rules", an Unschedulable reason. Preemption takes batch-1 off a clone of
// node01: RemovePod brings the count to 0 and node01 fits, so batch-1 is
// the victim.
func (pl *InterPodAffinity) AddPod(state *framework.CycleState, _, podToAdd *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	return updateWithPod(state, podToAdd, node, +1)
}

// RemovePod: see AddPod.
func (pl *InterPodAffinity) RemovePod(state *framework.CycleState, _, podToRemove *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	return updateWithPod(state, podToRemove, node, -1)
}

var _ framework.PreFilterExtensions = (*InterPodAffinity)(nil)

// updateWithPod adds (multiplier +1) or takes back (-1) what p counts for
// on node, in each of the three counts of PreFilter (Kubernetes'
// preFilterState.updateWithPod).
func updateWithPod(state *framework.CycleState, p *framework.PodInfo, node *framework.NodeInfo, multiplier int64) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	nodeLabels := node.Node().Labels
	// Rule 3: p's own required anti-affinity terms that select the pod.
	for i := range p.RequiredAntiAffinityTerms {
		t := &p.RequiredAntiAffinityTerms[i]
		if v, ok := nodeLabels[t.TopologyKey]; ok && t.Matches(s.pod, s.nsLabels) {
			s.existingAntiAffinityCounts.add(topologyPair{t.TopologyKey, v}, multiplier)
		}
	}
	// Rule 1: p counts for affinity only if it matches every term.
	if matchesAllTerms(s.affinityTerms, p.Pod) {
		for i := range s.affinityTerms {
			if v, ok := nodeLabels[s.affinityTerms[i].TopologyKey]; ok {
				s.affinityCounts.add(topologyPair{s.affinityTerms[i].TopologyKey, v}, multiplier)
			}
		}
	}
	// Rule 2: each anti-affinity term of the pod that selects p. The terms'
	// namespaceSelectors are resolved already: no namespace labels needed.
	for i := range s.antiAffinityTerms {
		t := &s.antiAffinityTerms[i]
		if v, ok := nodeLabels[t.TopologyKey]; ok && t.Matches(p.Pod, nil) {
			s.antiAffinityCounts.add(topologyPair{t.TopologyKey, v}, multiplier)
		}
	}
	return nil
}

// add changes a domain's count, and forgets a domain that drops to zero:
// "no pod matches anywhere" (the first-pod exception of rule 1) is an
// empty map.
func (c topologyCounts) add(pair topologyPair, n int64) {
	c[pair] += n
	if c[pair] == 0 {
		delete(c, pair)
	}
}

// Clone copies the counts, which AddPod and RemovePod change; the terms
// and the pod are never written after PreFilter.
func (s *preFilterState) Clone() framework.StateData {
	c := *s
	c.existingAntiAffinityCounts = maps.Clone(s.existingAntiAffinityCounts)
	c.affinityCounts = maps.Clone(s.affinityCounts)
	c.antiAffinityCounts = maps.Clone(s.antiAffinityCounts)
	return &c
}
