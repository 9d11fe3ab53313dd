package podtopologyspread

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

var skipScore = framework.NewStatus(framework.Skip,
	"the pod has no ScheduleAnyway topology spread constraint, and none by default: no Service, ReplicaSet or ReplicationController selects it")

// ignored is the raw score of a node that lacks a topology key of the
// pod's own constraints: NormalizeScore gives it 0, whatever the others get.
const ignored = -1

// preScoreState is what PreScore counts once for every Score call.
type preScoreState struct {
	spreads   []softSpread
	namespace string
	// requireAllKeys: only nodes with every constraint's key are scored.
	// True for the pod's own constraints; false for the system defaults,
	// so that nodes without a zone label are still spread by hostname.
	requireAllKeys bool
}

// softSpread is one ScheduleAnyway constraint and its counts.
type softSpread struct {
	constraint
	// domains: the matching pods per domain of the feasible nodes, counted
	// over every node; nil for kubernetes.io/hostname, whose domain is the
	// node itself, counted by Score.
	domains map[string]int64
	// weight is log(number of domains + 2): a pod more in a constraint of
	// many small domains weighs more than one in a few big ones.
	weight float64
}

// PreScore finds the domains of the feasible nodes, then counts the pods
// in them on every node, feasible or not, that the node inclusion
// policies take in. O(nodes + matching pods), and nothing at all for a
// pod that is not spread.
func (pl *PodTopologySpread) PreScore(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, all framework.NodeInfoLister) *framework.Status {
	cs, err := pl.constraintsOf(pod.Pod, corev1.ScheduleAnyway)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("obtaining pod's soft topology spread constraints: %w", err))
	}
	if len(cs) == 0 {
		return skipScore
	}
	s := &preScoreState{spreads: make([]softSpread, len(cs)), namespace: pod.Pod.Namespace,
		requireAllKeys: len(pod.Pod.Spec.TopologySpreadConstraints) > 0}
	unlabelled := make([]bool, len(cs)) // some scored node lacks the key
	scored := 0
	for i := range cs {
		s.spreads[i].constraint = cs[i]
		if !isHostname(&cs[i]) {
			s.spreads[i].domains = map[string]int64{}
		}
	}
	for _, n := range nodes {
		nodeLabels := n.Node().Labels
		if s.requireAllKeys && !hasAllKeys(nodeLabels, cs) {
			continue
		}
		scored++
		for i := range s.spreads {
			if sp := &s.spreads[i]; sp.domains != nil {
				if v, ok := nodeLabels[sp.topologyKey]; ok {
					sp.domains[v] += 0
				} else {
					unlabelled[i] = true
				}
			}
		}
	}
	needCounts := false
	for i := range s.spreads {
		sp := &s.spreads[i]
		size := scored
		if sp.domains != nil {
			// Kubernetes counts the nodes without the key as one more
			// domain here (they all have the value ""); so does mkube, for
			// the same scores, though they get no count of that key.
			size = len(sp.domains)
			if unlabelled[i] {
				size++
			}
			needCounts = needCounts || len(sp.domains) > 0
		}
		sp.weight = math.Log(float64(size + 2))
	}
	if needCounts {
		s.countDomains(pod.Pod, cs, all.List())
	}
	state.Write(preScoreStateKey, s)
	return nil
}

// countDomains adds up, for the constraints with domains, each node's
// matching pods into its domain, if that is a domain of a feasible node.
func (s *preScoreState) countDomains(pod *corev1.Pod, cs []constraint, nodes []*framework.NodeInfo) {
	inclusion := newNodeInclusion(pod, cs)
	for _, n := range nodes {
		node := n.Node()
		if s.requireAllKeys && !hasAllKeys(node.Labels, cs) {
			continue
		}
		matchesAffinity, toleratesTaints := inclusion.check(node)
		for i := range s.spreads {
			sp := &s.spreads[i]
			if sp.domains == nil || !sp.includes(matchesAffinity, toleratesTaints) {
				continue
			}
			v, ok := node.Labels[sp.topologyKey]
			if _, feasible := sp.domains[v]; ok && feasible {
				sp.domains[v] += int64(sp.countOn(n, s.namespace))
			}
		}
	}
}

// Score sums count × weight + (maxSkew - 1) over the constraints whose
// key the node has; higher is worse, until NormalizeScore turns it round.
func (pl *PodTopologySpread) Score(state *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	nodeLabels := node.Node().Labels
	var raw float64
	for i := range s.spreads {
		sp := &s.spreads[i]
		v, ok := nodeLabels[sp.topologyKey]
		if !ok {
			if s.requireAllKeys {
				return ignored, nil
			}
			continue
		}
		var count int64
		if sp.domains == nil {
			count = int64(sp.countOn(node, s.namespace))
		} else {
			count = sp.domains[v]
		}
		raw += float64(count)*sp.weight + float64(sp.maxSkew-1)
	}
	return int64(math.Round(raw)), nil
}

// NormalizeScore turns raw scores round, fewer pods scoring higher:
//
//	score = 100 × (max + min - raw) / max       (100 for all if max is 0)
//
// over the nodes not ignored, which score 0.
func (pl *PodTopologySpread) NormalizeScore(_ *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	var lowest, highest int64 = math.MaxInt64, 0
	for i := range scores {
		if s := scores[i].Score; s != ignored {
			lowest, highest = min(lowest, s), max(highest, s)
		}
	}
	for i := range scores {
		switch s := scores[i].Score; {
		case s == ignored:
			scores[i].Score = 0
		case highest == 0:
			scores[i].Score = framework.MaxNodeScore
		default:
			scores[i].Score = framework.MaxNodeScore * (highest + lowest - s) / highest
		}
	}
	return nil
}
