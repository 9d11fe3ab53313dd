package framework

import (
	"fmt"
	"strconv"
)

// Score bounds: every ScorePlugin's scores end up, after NormalizeScore,
// between MinNodeScore and MaxNodeScore, so that weights, not units,
// decide which plugin matters more.
const (
	MinNodeScore int64 = 0
	MaxNodeScore int64 = 100
)

// Plugin is a named piece of scheduling policy.
type Plugin interface {
	Name() string
}

// PreFilterPlugin prepares a Filter: it runs once per cycle, before any
// node is filtered, and stores in the CycleState what Filter then reads
// for every node. It may return
//
//	Skip                          the pod asks nothing of this plugin: its Filter is not called this cycle
//	Unschedulable[AndUnresolvable] the pod fits no node at all (every node gets this status)
//	Error                         the cycle is abandoned
//
// nodes is every node of the snapshot, for plugins that count pods across
// the cluster (InterPodAffinity).
type PreFilterPlugin interface {
	Plugin
	PreFilter(state *CycleState, pod *PodInfo, nodes NodeInfoLister) *Status
}

// FilterPlugin is a predicate (预选): can pod run on this node?
// Filters must not change pod, node or state, and must be safe to call
// for many nodes at once.
type FilterPlugin interface {
	Plugin
	Filter(state *CycleState, pod *PodInfo, node *NodeInfo) *Status
}

// PreScorePlugin prepares a Score: it runs once per cycle on the nodes
// that passed every filter (the same slice, in the same order, that Score
// and NormalizeScore then see). Skip means the plugin has nothing to say
// about this pod: its Score is not called and it adds nothing to any node.
type PreScorePlugin interface {
	Plugin
	PreScore(state *CycleState, pod *PodInfo, nodes []*NodeInfo, all NodeInfoLister) *Status
}

// ScorePlugin is a priority (优选): how good is this node for pod? It is
// called only for nodes that passed every filter. A plugin without
// NormalizeScore must return MinNodeScore to MaxNodeScore; one with it may
// return raw counts (matching pods, taints...) that NormalizeScore turns
// into that range once every node has been scored.
type ScorePlugin interface {
	Plugin
	Score(state *CycleState, pod *PodInfo, node *NodeInfo) (int64, *Status)
}

// NodeScore is one plugin's score of one node.
type NodeScore struct {
	Name  string
	Score int64
}

// NormalizeScorePlugin is a ScorePlugin whose raw scores only mean
// something relative to each other (Kubernetes' ScoreExtensions). scores[i]
// is the score of the i-th node given to PreScore; NormalizeScore rewrites
// them in place into MinNodeScore..MaxNodeScore.
type NormalizeScorePlugin interface {
	ScorePlugin
	NormalizeScore(state *CycleState, pod *PodInfo, scores []NodeScore) *Status
}

// EnqueueExtensions is implemented by plugins that reject pods: the
// cluster events after which a pod they rejected may fit, so the queue
// retries it then (and not on every unrelated change).
type EnqueueExtensions interface {
	Plugin
	EventsToRegister() []ClusterEvent
}

// ExtensionPoints is a set of the extension points a plugin is enabled at.
type ExtensionPoints uint8

const (
	// AtFilter: Filter, and PreFilter if the plugin has one.
	AtFilter ExtensionPoints = 1 << iota
	// AtScore: Score, and PreScore and NormalizeScore if it has them.
	AtScore
)

// PluginSpec enables a plugin in a Framework. Weight multiplies its scores
// (kube-scheduler's default for NodeResourcesFit is 1); 0 means 1. At
// narrows the extension points it is enabled at, as a profile that lists
// a plugin under filter but disables it under score does; 0 means every
// extension point the plugin implements.
type PluginSpec struct {
	Plugin Plugin
	Weight int64
	At     ExtensionPoints
}

// maxPlugins per extension point: CycleState keeps which were skipped in
// the bits of a uint64.
const maxPlugins = 64

// Framework runs the enabled plugins at each extension point, in the order
// they were given (kube-scheduler runs filters in a fixed order too,
// cheapest and most decisive first, and stops at the first rejection).
//
// One cycle, as schedulePod drives it:
//
//	RunPreFilterPlugins  once         what the filters need (or Skip)
//	RunFilterPlugins     per node     until enough nodes fit
//	RunPreScorePlugins   once         what the scores need (or Skip)
//	RunScorePlugins      per node     Score, then NormalizeScore, then × weight
type Framework struct {
	filters []filterPlugin
	scores  []scorePlugin
	events  map[string][]ClusterEvent
	// The binding cycle's plugins (binding_cycle.go), in order.
	reserves []ReservePlugin
	preBinds []PreBindPlugin
}

type filterPlugin struct {
	FilterPlugin
	pre PreFilterPlugin     // nil if the plugin has no PreFilter
	ext PreFilterExtensions // nil if its PreFilter state does not count pods (preemption.go)
}

type scorePlugin struct {
	ScorePlugin
	weight    int64
	pre       PreScorePlugin       // nil if none
	normalize NormalizeScorePlugin // nil if none
}

// New builds a framework from plugins; each is registered at every
// extension point it implements, unless its spec says otherwise.
func New(specs ...PluginSpec) (*Framework, error) {
	f := &Framework{events: map[string][]ClusterEvent{}}
	seen := map[string]bool{}
	for _, s := range specs {
		name := s.Plugin.Name()
		if seen[name] {
			return nil, fmt.Errorf("plugin %q enabled twice", name)
		}
		seen[name] = true
		at := s.At
		if at == 0 {
			at = AtFilter | AtScore
		}
		p, isFilter := s.Plugin.(FilterPlugin)
		if isFilter && at&AtFilter != 0 {
			fp := filterPlugin{FilterPlugin: p}
			fp.pre, _ = s.Plugin.(PreFilterPlugin)
			if fp.pre != nil {
				fp.ext, _ = s.Plugin.(PreFilterExtensions)
			}
			f.filters = append(f.filters, fp)
			if e, ok := s.Plugin.(EnqueueExtensions); ok {
				f.events[name] = e.EventsToRegister()
			}
			f.addBindingCycle(s.Plugin)
		}
		if p, ok := s.Plugin.(ScorePlugin); ok && at&AtScore != 0 {
			w := s.Weight
			if w <= 0 {
				w = 1
			}
			sp := scorePlugin{ScorePlugin: p, weight: w}
			sp.pre, _ = s.Plugin.(PreScorePlugin)
			sp.normalize, _ = s.Plugin.(NormalizeScorePlugin)
			f.scores = append(f.scores, sp)
		}
	}
	if len(f.filters) > maxPlugins || len(f.scores) > maxPlugins {
		return nil, fmt.Errorf("more than %d filter or score plugins", maxPlugins)
	}
	return f, nil
}

// RunPreFilterPlugins runs every PreFilter and records which filters to
// skip. A rejection means the pod fits no node; the status names its
// plugin.
func (f *Framework) RunPreFilterPlugins(state *CycleState, pod *PodInfo, nodes NodeInfoLister) *Status {
	for i, p := range f.filters {
		if p.pre == nil {
			continue
		}
		st := p.pre.PreFilter(state, pod, nodes)
		switch st.Code() {
		case Success:
		case Skip:
			state.skipFilter |= 1 << i
			state.skippedFilters = append(state.skippedFilters, SkippedPlugin{p.Name(), st.Message()})
		default:
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunFilterPlugins runs the filters on one node and returns the first
// rejection, naming its plugin, or nil if the pod fits.
func (f *Framework) RunFilterPlugins(state *CycleState, pod *PodInfo, node *NodeInfo) *Status {
	for i, p := range f.filters {
		if state.skipFilter&(1<<i) != 0 {
			continue
		}
		if st := p.Filter(state, pod, node); !st.IsSuccess() {
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunPreScorePlugins runs every PreScore on the feasible nodes and records
// which scores to skip.
func (f *Framework) RunPreScorePlugins(state *CycleState, pod *PodInfo, nodes []*NodeInfo, all NodeInfoLister) *Status {
	for i, p := range f.scores {
		if p.pre == nil {
			continue
		}
		st := p.pre.PreScore(state, pod, nodes, all)
		switch st.Code() {
		case Success:
		case Skip:
			state.skipScore |= 1 << i
			state.skippedScores = append(state.skippedScores, SkippedPlugin{p.Name(), st.Message()})
		default:
			return st.WithPlugin(p.Name())
		}
	}
	return nil
}

// PluginWeight is a score plugin of a cycle and its weight.
type PluginWeight struct {
	Name   string
	Weight int64
}

// NodePluginScores is the score of one node: each plugin's part and the
// total the scheduler compares.
type NodePluginScores struct {
	Name string
	// Scores holds each plugin's normalised score (MinNodeScore to
	// MaxNodeScore), in the order of the plugins RunScorePlugins returns.
	// Plain numbers: with thousands of nodes a cycle stores tens of
	// thousands of them, and numbers cost the garbage collector nothing.
	Scores     []int64
	TotalScore int64 // Σ Scores[i] × weight of plugin i
}

// RunScorePlugins scores every node that passed the filters, plugin by
// plugin (NormalizeScore needs all of a plugin's scores at once):
//
//	total(node) = Σ over score plugins p not skipped of  weight(p) × normalised p.Score(pod, node)
//
// It returns the plugins that scored, with their weights, and every
// node's scores in that order.
func (f *Framework) RunScorePlugins(state *CycleState, pod *PodInfo, nodes []*NodeInfo) ([]PluginWeight, []NodePluginScores, *Status) {
	var active []*scorePlugin
	var plugins []PluginWeight
	for i := range f.scores {
		if state.skipScore&(1<<i) == 0 {
			active = append(active, &f.scores[i])
			plugins = append(plugins, PluginWeight{f.scores[i].Name(), f.scores[i].weight})
		}
	}
	k := len(active)
	out := make([]NodePluginScores, len(nodes))
	parts := make([]int64, len(nodes)*k)    // one allocation for every node's scores
	scores := make([]NodeScore, len(nodes)) // one plugin's scores, reused
	for i, n := range nodes {
		out[i].Name = n.Node().Name
		out[i].Scores = parts[i*k : (i+1)*k : (i+1)*k]
		scores[i].Name = out[i].Name
	}
	for j, p := range active {
		for i, n := range nodes {
			s, st := p.Score(state, pod, n)
			if !st.IsSuccess() {
				return nil, nil, st.WithPlugin(p.Name())
			}
			scores[i].Score = s
		}
		if p.normalize != nil {
			if st := p.normalize.NormalizeScore(state, pod, scores); !st.IsSuccess() {
				return nil, nil, st.WithPlugin(p.Name())
			}
		}
		for i := range nodes {
			s := scores[i].Score
			if s < MinNodeScore || s > MaxNodeScore {
				return nil, nil, AsStatus(fmt.Errorf("plugin %s scored node %s %d, outside [%d, %d]", p.Name(), scores[i].Name, s, MinNodeScore, MaxNodeScore)).WithPlugin(p.Name())
			}
			out[i].Scores[j] = s
			out[i].TotalScore += s * p.weight
		}
	}
	return plugins, out, nil
}

// HasScorePlugins reports whether any plugin scores.
func (f *Framework) HasScorePlugins() bool { return len(f.scores) > 0 }

// EventsToRegister maps each filter plugin that implements
// EnqueueExtensions to the events it registered.
func (f *Framework) EventsToRegister() map[string][]ClusterEvent { return f.events }

// ListPlugins names the enabled plugins in order: the filters, and the
// scores as "name:weight". For the log line that shows the profile.
func (f *Framework) ListPlugins() (filter, score []string) {
	for _, p := range f.filters {
		filter = append(filter, p.Name())
	}
	for _, p := range f.scores {
		score = append(score, p.Name()+":"+strconv.FormatInt(p.weight, 10))
	}
	return filter, score
}
