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
//	MaxCSIVolumeCountPred       NodeVolumeLimits                  ✓          (the CSINode's allocatable count per driver)
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
// NodeVolumeLimits (MaxCSIVolumeCountPred: no more volumes of a CSI
// driver on a node than the driver can attach there) counts against the
// CSINode each kubelet writes. mkube runs no CSI driver, but its kubelet
// writes a CSINode for the driver its provisioner mkube.io/hostpath stands
// for, hostpath.csi.mkube.io, with the count of its --max-volumes (0, the
// default: no limit), and the plugin counts mkube's provisioned volumes
// under that driver.
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
	{"NodeVolumeLimits", 0},
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
