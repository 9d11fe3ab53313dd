package framework

import (
	"fmt"
)

// Score bounds: every ScorePlugin rates a node from MinNodeScore to
// MaxNodeScore, so that weights, not units, decide which plugin matters
// more.
const (
	MinNodeScore int64 = 0
	MaxNodeScore int64 = 100
)

// Plugin is a named piece of scheduling policy.
type Plugin interface {
	Name() string
}

// FilterPlugin is a predicate (预选): can pod run on this node?
// Filters must not change pod or node, and must be safe to call for many
// nodes at once.
type FilterPlugin interface {
	Plugin
	Filter(pod *PodInfo, node *NodeInfo) *Status
}

// ScorePlugin is a priority (优选): how good is this node for pod, from
// MinNodeScore to MaxNodeScore? It is called only for nodes that passed
// every filter.
type ScorePlugin interface {
	Plugin
	Score(pod *PodInfo, node *NodeInfo) (int64, *Status)
}

// EnqueueExtensions is implemented by plugins that reject pods: the
// cluster events after which a pod they rejected may fit, so the queue
// retries it then (and not on every unrelated change).
type EnqueueExtensions interface {
	Plugin
	EventsToRegister() []ClusterEvent
}

// PluginSpec enables a plugin in a Framework. Weight multiplies its scores
// (kube-scheduler's default for NodeResourcesFit is 1); it is ignored for a
// plugin that does not score.
type PluginSpec struct {
	Plugin Plugin
	Weight int64
}

// Framework runs the enabled plugins at each extension point, in the
// order they were given (kube-scheduler runs filters in a fixed order too,
// cheapest and most decisive first, and stops at the first rejection).
type Framework struct {
	filters []FilterPlugin
	scores  []weightedScorer
	events  map[string][]ClusterEvent
}

type weightedScorer struct {
	ScorePlugin
	weight int64
}

// New builds a framework from plugins; each is registered at every
// extension point it implements.
func New(specs ...PluginSpec) (*Framework, error) {
	f := &Framework{events: map[string][]ClusterEvent{}}
	seen := map[string]bool{}
	for _, s := range specs {
		name := s.Plugin.Name()
		if seen[name] {
			return nil, fmt.Errorf("plugin %q enabled twice", name)
		}
		seen[name] = true
		if p, ok := s.Plugin.(FilterPlugin); ok {
			f.filters = append(f.filters, p)
		}
		if p, ok := s.Plugin.(ScorePlugin); ok {
			w := s.Weight
			if w <= 0 {
				w = 1
			}
			f.scores = append(f.scores, weightedScorer{p, w})
		}
		if p, ok := s.Plugin.(EnqueueExtensions); ok {
			f.events[name] = p.EventsToRegister()
		}
	}
	return f, nil
}

// RunFilterPlugins runs the filters on one node and returns the first
// rejection, naming its plugin, or nil if the pod fits.
func (f *Framework) RunFilterPlugins(pod *PodInfo, node *NodeInfo) *Status {
	for _, p := range f.filters {
		if st := p.Filter(pod, node); !st.IsSuccess() {
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// PluginScore is one plugin's weighted score of one node.
type PluginScore struct {
	Name  string
	Score int64 // raw score × weight
}

// NodePluginScores is the score of one node: each plugin's part and the
// total the scheduler compares.
type NodePluginScores struct {
	Name       string
	Scores     []PluginScore
	TotalScore int64
}

// RunScorePlugins scores every node that passed the filters:
//
//	total(node) = Σ over score plugins p of  weight(p) × p.Score(pod, node)
func (f *Framework) RunScorePlugins(pod *PodInfo, nodes []*NodeInfo) ([]NodePluginScores, *Status) {
	out := make([]NodePluginScores, len(nodes))
	all := make([]PluginScore, 0, len(nodes)*len(f.scores)) // one allocation for every node's parts
	for i, n := range nodes {
		out[i] = NodePluginScores{Name: n.Node().Name}
		for _, p := range f.scores {
			s, st := p.Score(pod, n)
			if !st.IsSuccess() {
				return nil, st.WithPlugin(p.Name())
			}
			if s < MinNodeScore || s > MaxNodeScore {
				return nil, AsStatus(fmt.Errorf("plugin %s scored node %s %d, outside [%d, %d]", p.Name(), n.Node().Name, s, MinNodeScore, MaxNodeScore))
			}
			all = append(all, PluginScore{Name: p.Name(), Score: s * p.weight})
			out[i].TotalScore += s * p.weight
		}
		out[i].Scores = all[len(all)-len(f.scores) : len(all) : len(all)]
	}
	return out, nil
}

// HasScorePlugins reports whether any plugin scores.
func (f *Framework) HasScorePlugins() bool { return len(f.scores) > 0 }

// EventsToRegister maps each plugin that implements EnqueueExtensions to
// the events it registered.
func (f *Framework) EventsToRegister() map[string][]ClusterEvent { return f.events }
