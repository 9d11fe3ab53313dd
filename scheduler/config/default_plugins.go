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
//	NoDiskConflict              VolumeRestrictions                ✓          (and ReadWriteOncePod claims)
//	CheckVolumeBinding          VolumeBinding                     ✓          (the claims' volumes on the node)
//	NoVolumeZoneConflict        VolumeZone                        ✓
//	SelectorSpreadPriority      PodTopologySpread                 ✓       2  (spec.topologySpreadConstraints; by default replicas apart)
//	MatchInterPodAffinity       InterPodAffinity                  ✓       2  InterPodAffinityPriority
//	BalancedResourceAllocation  NodeResourcesBalancedAllocation           1
//	ImageLocalityPriority       ImageLocality                             1
//
// The weights say how much each opinion counts: TaintToleration's 3 and
// NodeAffinity's 2 are the user's stated preferences (PreferNoSchedule,
// preferred terms), so they outweigh the resource heuristics; InterPodAffinity
// and PodTopologySpread count 2 for the same reason (Kubernetes'
// kubescheduler.config.k8s.io/v1 defaults; the older v1beta1 gave
// InterPodAffinity 1).
//
// Kubernetes' NodeVolumeLimits (MaxCSIVolumeCountPred: no more CSI
// volumes on a node than its driver can attach) is not in mkube: its
// limits come from the CSINode objects kubelets write for their CSI
// drivers, and mkube serves no CSINode and runs no CSI driver, so it
// would have nothing to count against.
//
// The seed's SelectorSpreadPriority (replicas of one Deployment or RC on
// different nodes) is, since Kubernetes v1.20, PodTopologySpread's system
// default constraints; the SelectorSpread plugin is still in mkube's
// registry for a --config that names it, but not in this profile.
var DefaultPlugins = []DefaultPlugin{
	{"NodeUnschedulable", 0},
	{"NodeName", 0},
	{"TaintToleration", 3},
	{"NodeAffinity", 2},
	{"NodePorts", 0},
	{"NodeResourcesFit", 1},
	{"VolumeRestrictions", 0},
	{"VolumeBinding", 0},
	{"VolumeZone", 0},
	{"PodTopologySpread", 2},
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
