package interpodaffinity

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/scheduler/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

var skipScore = framework.NewStatus(framework.Skip, "no preferred pod (anti-)affinity, the pod's or a running pod's, applies")

// topologyScore is the points of each domain: topology key → value → points.
type topologyScore map[string]map[string]int64

func (m topologyScore) add(key, value string, points int64) {
	if m[key] == nil {
		m[key] = map[string]int64{}
	}
	m[key][value] += points
}

// preScoreState is what PreScore sums once for every Score call.
type preScoreState struct {
	scores topologyScore
}

// PreScore sums the points of every domain, in two passes: the incoming
// pod's preferred terms about the pods on each node (only the candidates
// each term may select, candidates.go), then the terms of the pods that
// have some about the incoming pod (symmetry; only the nodes holding such
// pods, which the snapshot lists). If no domain gets any points, the
// plugin skips: it would score every node the same.
func (pl *InterPodAffinity) PreScore(state *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo, all framework.NodeInfoLister) *framework.Status {
	if pod.ParseError != nil {
		return framework.AsStatus(pod.ParseError) // PreFilter refused it already
	}
	scores := topologyScore{}
	preferred := pl.mergeWeightedNamespaces(pod.PreferredAffinityTerms)
	preferredAnti := pl.mergeWeightedNamespaces(pod.PreferredAntiAffinityTerms)
	if len(preferred)+len(preferredAnti) > 0 {
		preferredCandidates, antiCandidates := weightedCandidates(preferred), weightedCandidates(preferredAnti)
		for _, n := range all.List() {
			scores.addPreferred(preferred, preferredCandidates, n, 1)
			scores.addPreferred(preferredAnti, antiCandidates, n, -1)
		}
	}
	nsLabels := pl.handle.NamespaceLabels(pod.Pod.Namespace)
	for _, n := range all.HavePodsWithAffinityList() {
		node := n.Node()
		for _, existing := range n.PodsWithAffinity {
			for i := range existing.RequiredAffinityTerms {
				scores.addTerm(&existing.RequiredAffinityTerms[i], hardPodAffinityWeight, pod.Pod, nsLabels, node)
			}
			scores.addTerms(existing.PreferredAffinityTerms, pod.Pod, nsLabels, node, 1)
			scores.addTerms(existing.PreferredAntiAffinityTerms, pod.Pod, nsLabels, node, -1)
		}
	}
	if len(scores) == 0 {
		return skipScore
	}
	state.Write(preScoreStateKey, &preScoreState{scores: scores})
	return nil
}

func weightedCandidates(terms []framework.WeightedAffinityTerm) []candidates {
	out := make([]candidates, len(terms))
	for i := range terms {
		out[i] = newCandidates(&terms[i].AffinityTerm)
	}
	return out
}

// addPreferred gives the domain of node n sign × weight points per pod on
// n that each term selects.
func (m topologyScore) addPreferred(terms []framework.WeightedAffinityTerm, cands []candidates, n *framework.NodeInfo, sign int64) {
	node := n.Node()
	for i := range terms {
		t := &terms[i]
		v, ok := node.Labels[t.TopologyKey]
		if !ok {
			continue
		}
		var matched int64
		cands[i].visit(n, func(existing *framework.PodInfo) {
			if t.Matches(existing.Pod, nil) {
				matched++
			}
		})
		if matched > 0 {
			m.add(t.TopologyKey, v, sign*int64(t.Weight)*matched)
		}
	}
}

// addTerm gives points to the domain of node, for the topology key of
// term, if term selects pod.
func (m topologyScore) addTerm(term *framework.AffinityTerm, points int64, pod *corev1.Pod, nsLabels labels.Set, node *corev1.Node) {
	if !term.Matches(pod, nsLabels) {
		return
	}
	if v, ok := node.Labels[term.TopologyKey]; ok {
		m.add(term.TopologyKey, v, points)
	}
}

func (m topologyScore) addTerms(terms []framework.WeightedAffinityTerm, pod *corev1.Pod, nsLabels labels.Set, node *corev1.Node, sign int64) {
	for i := range terms {
		m.addTerm(&terms[i].AffinityTerm, sign*int64(terms[i].Weight), pod, nsLabels, node)
	}
}

// Score is the sum of the points of the node's domains; it may be
// negative until NormalizeScore.
func (pl *InterPodAffinity) Score(state *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	var sum int64
	for key, values := range s.scores {
		if v, ok := node.Node().Labels[key]; ok {
			sum += values[v]
		}
	}
	return sum, nil
}

// NormalizeScore maps the points onto 0-100, the fewest points to 0 and
// the most to 100:
//
//	score = 100 × (points - min) / (max - min)     (all 0 if max == min)
//
// Example: points node01 -5, node02 0, node03 15 → 0, 25, 100.
func (pl *InterPodAffinity) NormalizeScore(_ *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	if len(scores) == 0 {
		return nil
	}
	lo, hi := scores[0].Score, scores[0].Score
	for _, s := range scores {
		lo, hi = min(lo, s.Score), max(hi, s.Score)
	}
	for i := range scores {
		var s int64
		if hi > lo {
			s = int64(float64(framework.MaxNodeScore) * float64(scores[i].Score-lo) / float64(hi-lo))
		}
		scores[i].Score = s
	}
	return nil
}
