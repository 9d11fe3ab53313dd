package config

// DefaultPlugins is the default profile: every plugin mkube has, in
// kube-scheduler's order, with kube-scheduler's default weights. Filters
// run in this order and a node reports only the first that rejects it, so
// the order shapes the FailedScheduling message: a cordoned node short of
// cpu counts as "node(s) were unschedulable", not "Insufficient cpu".
//
//	seed name                   Kubernetes plugin                 Filter  Score weight
//	CheckNodeUnschedulable      NodeUnschedulable                 ✓
//	PodFitsHost                 NodeName                          ✓
//	PodToleratesNodeTaints      TaintToleration                   ✓       3  TaintTolerationPriority
//	PodSelectorMatches          NodeAffinity                      ✓       2  NodeAffinityPriority
//	PodFitsHostPorts            NodePorts                         ✓
//	PodFitsResources            NodeResourcesFit                  ✓       1  LeastRequestedPriority
//	NoDiskConflict              VolumeRestrictions                ✓
//	SelectorSpreadPriority      SelectorSpread                            2  (PodTopologySpread's place)
//	MatchInterPodAffinity       InterPodAffinity                  ✓       2  InterPodAffinityPriority
//	BalancedResourceAllocation  NodeResourcesBalancedAllocation           1
//	ImageLocalityPriority       ImageLocality                             1
//
// The weights say how much each opinion counts: TaintToleration's 3 and
// NodeAffinity's 2 are the user's stated preferences (PreferNoSchedule,
// preferred terms), so they outweigh the resource heuristics; InterPodAffinity
// and SelectorSpread count 2 for the same reason (Kubernetes'
// kubescheduler.config.k8s.io/v1 defaults; the older v1beta1 gave
// InterPodAffinity 1).
var DefaultPlugins = []DefaultPlugin{
	{"NodeUnschedulable", 0},
	{"NodeName", 0},
	{"TaintToleration", 3},
	{"NodeAffinity", 2},
	{"NodePorts", 0},
	{"NodeResourcesFit", 1},
	{"VolumeRestrictions", 0},
	{"SelectorSpread", 2},
	{"InterPodAffinity", 2},
	{"NodeResourcesBalancedAllocation", 1},
	{"ImageLocality", 1},
}

// DefaultPlugin is a plugin of the default profile and its score weight
// (0 for a plugin that only filters).
type DefaultPlugin struct {
	Name   string
	Weight int64
}
