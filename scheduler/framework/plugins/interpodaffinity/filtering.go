package interpodaffinity

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/scheduler/framework"
)

// Reasons, worded as in Kubernetes.
const (
	ErrReasonAffinityRulesNotMatch             = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinityRulesNotMatch         = "node(s) didn't match pod anti-affinity rules"
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
)

// The three rejections, shared. An unmet affinity is Unresolvable:
// removing pods cannot bring a wanted pod. Anti-affinity is Unschedulable:
// the unwanted pod may go.
var (
	errAffinity             = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch).WithPlugin(Name)
	errAntiAffinity         = framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch).WithPlugin(Name)
	errExistingAntiAffinity = framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch).WithPlugin(Name)
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

var skipFilter = framework.NewStatus(framework.Skip, "the pod has no required pod (anti-)affinity and no running pod's anti-affinity selects it")

// topologyPair is one topology domain: a node label key and value,
// {myname, scj}.
type topologyPair struct {
	key, value string
}

// topologyCounts counts matching pods per domain.
type topologyCounts map[topologyPair]int64

// preFilterState is what PreFilter counts once for every Filter call.
type preFilterState struct {
	// existingAntiAffinityCounts: per domain, the required anti-affinity
	// terms of pods running there that select the incoming pod (rule 3).
	existingAntiAffinityCounts topologyCounts
	// affinityCounts: per domain of each required affinity term, the pods
	// there that match all the incoming pod's required affinity terms (rule 1).
	affinityCounts topologyCounts
	// antiAffinityCounts: per domain of each required anti-affinity term,
	// the pods there that the term selects (rule 2).
	antiAffinityCounts topologyCounts
	// The incoming pod's required terms, namespaceSelector resolved.
	affinityTerms, antiAffinityTerms []framework.AffinityTerm
	pod                              *corev1.Pod
	nsLabels                         labels.Set // the labels of the pod's namespace
}

// PreFilter counts, once per cycle, the pods matching the incoming pod's
// required terms and the existing pods whose required anti-affinity
// selects the incoming pod, per topology domain. A pod without required
// terms, in a cluster where no running pod's anti-affinity selects it,
// skips the Filter.
func (pl *InterPodAffinity) PreFilter(state *framework.CycleState, pod *framework.PodInfo, nodes framework.NodeInfoLister) *framework.Status {
	if pod.ParseError != nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "invalid pod affinity: "+pod.ParseError.Error())
	}
	s := &preFilterState{
		affinityTerms:     pl.mergeNamespaces(pod.RequiredAffinityTerms),
		antiAffinityTerms: pl.mergeNamespaces(pod.RequiredAntiAffinityTerms),
		pod:               pod.Pod,
		nsLabels:          pl.handle.NamespaceLabels(pod.Pod.Namespace),
	}
	s.existingAntiAffinityCounts = existingAntiAffinityCounts(pod.Pod, s.nsLabels, nodes.HavePodsWithRequiredAntiAffinityList())
	s.affinityCounts, s.antiAffinityCounts = incomingAffinityCounts(s.affinityTerms, s.antiAffinityTerms, nodes.List())
	if len(s.existingAntiAffinityCounts) == 0 && len(s.affinityTerms) == 0 && len(s.antiAffinityTerms) == 0 {
		return skipFilter
	}
	state.Write(preFilterStateKey, s)
	return nil
}

// existingAntiAffinityCounts visits only the pods with required
// anti-affinity (the snapshot lists their nodes): O(such pods).
func existingAntiAffinityCounts(pod *corev1.Pod, nsLabels labels.Set, nodes []*framework.NodeInfo) topologyCounts {
	counts := topologyCounts{}
	for _, n := range nodes {
		node := n.Node()
		for _, existing := range n.PodsWithRequiredAntiAffinity {
			for i := range existing.RequiredAntiAffinityTerms {
				t := &existing.RequiredAntiAffinityTerms[i]
				if !t.Matches(pod, nsLabels) {
					continue
				}
				if v, ok := node.Labels[t.TopologyKey]; ok {
					counts[topologyPair{t.TopologyKey, v}]++
				}
			}
		}
	}
	return counts
}

// incomingAffinityCounts counts, on every node, the pods the incoming
// pod's required terms select, visiting only the candidates of each term
// (candidates.go): O(nodes + matching pods).
func incomingAffinityCounts(affinity, antiAffinity []framework.AffinityTerm, nodes []*framework.NodeInfo) (topologyCounts, topologyCounts) {
	affinityCounts, antiAffinityCounts := topologyCounts{}, topologyCounts{}
	if len(affinity) == 0 && len(antiAffinity) == 0 {
		return affinityCounts, antiAffinityCounts
	}
	// A pod counts for affinity only if it matches every term: the
	// candidates of one term are enough to look at.
	affinityCandidates := candidates{nothing: true}
	for i := range affinity {
		if c := newCandidates(&affinity[i]); i == 0 || c.key != "" {
			affinityCandidates = c
			if c.key != "" {
				break
			}
		}
	}
	antiCandidates := newCandidatesOf(antiAffinity)
	for _, n := range nodes {
		node := n.Node()
		affinityCandidates.visit(n, func(existing *framework.PodInfo) {
			if !matchesAllTerms(affinity, existing.Pod) {
				return
			}
			for i := range affinity {
				if v, ok := node.Labels[affinity[i].TopologyKey]; ok {
					affinityCounts[topologyPair{affinity[i].TopologyKey, v}]++
				}
			}
		})
		for i := range antiAffinity {
			t := &antiAffinity[i]
			v, ok := node.Labels[t.TopologyKey]
			if !ok {
				continue // the node is in no domain of this term
			}
			antiCandidates[i].visit(n, func(existing *framework.PodInfo) {
				if t.Matches(existing.Pod, nil) {
					antiAffinityCounts[topologyPair{t.TopologyKey, v}]++
				}
			})
		}
	}
	return affinityCounts, antiAffinityCounts
}

// matchesAllTerms reports whether pod matches every term (and there is at
// least one). The terms' namespaceSelectors are resolved already, so no
// namespace labels are needed.
func matchesAllTerms(terms []framework.AffinityTerm, pod *corev1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}

// Filter applies the three rules to one node with the counts of PreFilter.
func (pl *InterPodAffinity) Filter(state *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err) // needs the whole cluster: PreFilter must run
	}
	labels := node.Node().Labels
	if !s.satisfiesAffinity(labels) {
		return errAffinity
	}
	if !s.satisfiesAntiAffinity(labels) {
		return errAntiAffinity
	}
	if !s.satisfiesExistingAntiAffinity(labels) {
		return errExistingAntiAffinity
	}
	return nil
}

// satisfiesAffinity: rule 1, with the first-pod exception.
func (s *preFilterState) satisfiesAffinity(nodeLabels map[string]string) bool {
	podsExist := true
	for i := range s.affinityTerms {
		v, ok := nodeLabels[s.affinityTerms[i].TopologyKey]
		if !ok {
			return false // the node is in no domain of this key at all
		}
		if s.affinityCounts[topologyPair{s.affinityTerms[i].TopologyKey, v}] <= 0 {
			podsExist = false
		}
	}
	if podsExist {
		return true
	}
	// The first pod of a group that wants to be together: no pod matches
	// anywhere, but this one matches its own terms. Without this, such a
	// group could never start.
	return len(s.affinityCounts) == 0 && matchesAllTerms(s.affinityTerms, s.pod)
}

// satisfiesAntiAffinity: rule 2.
func (s *preFilterState) satisfiesAntiAffinity(nodeLabels map[string]string) bool {
	for i := range s.antiAffinityTerms {
		if v, ok := nodeLabels[s.antiAffinityTerms[i].TopologyKey]; ok {
			if s.antiAffinityCounts[topologyPair{s.antiAffinityTerms[i].TopologyKey, v}] > 0 {
				return false
			}
		}
	}
	return true
}

// satisfiesExistingAntiAffinity: rule 3.
func (s *preFilterState) satisfiesExistingAntiAffinity(nodeLabels map[string]string) bool {
	if len(s.existingAntiAffinityCounts) == 0 {
		return true
	}
	for k, v := range nodeLabels {
		if s.existingAntiAffinityCounts[topologyPair{k, v}] > 0 {
			return false
		}
	}
	return true
}
