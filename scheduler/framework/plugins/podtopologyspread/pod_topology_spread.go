// Package podtopologyspread spreads pods over topology domains: the
// pod's spec.topologySpreadConstraints, or, for a pod with none,
// Kubernetes' system defaults, which spread the replicas of one
// Service, ReplicaSet or ReplicationController over nodes and zones.
// Kubernetes plugin: PodTopologySpread. Seed 003 calls the spreading
// SelectorSpreadPriority ("对同属一个 Deployment 或者 RC 下面的的多个 Pod
// 副本，尽量调度到多个不同的节点上"); Kubernetes' default profile spreads
// with this plugin instead since v1.20 (the DefaultPodTopologySpread
// feature, GA in v1.24); package selectorspread keeps the old rule.
//
// A constraint names a topologyKey (a node label: each of its values is a
// domain), a labelSelector (the pods it counts, in the pod's namespace,
// not being deleted), and maxSkew, how much more one domain may hold than
// the emptiest. The count of a domain is the selected pods on the nodes
// of that domain that the constraint takes into account: with
// nodeAffinityPolicy Honor (the default) only nodes matching the pod's
// nodeSelector and required node affinity, with nodeTaintsPolicy Honor
// (default Ignore) only nodes whose NoSchedule and NoExecute taints the
// pod tolerates. matchLabelKeys adds key=value to the selector for each
// key the pod has (pod-template-hash: only this revision's pods count).
//
// Filter (whenUnsatisfiable: DoNotSchedule), filtering.go. A node fits
// each constraint when it has the topologyKey and
//
//	count(domain of node) + self - globalMin  ≤  maxSkew
//
// where self is 1 if the pod matches the selector itself (it would add to
// the domain it lands in) and globalMin the smallest count over the
// domains, or 0 while fewer than minDomains (default 1) domains exist.
//
//	zone a: 2 pods app=web, zone b: 1; maxSkew 1; a new app=web pod
//	node in zone a: 2 + 1 - 1 = 2 > 1  → "node(s) didn't match pod topology spread constraints"
//	node in zone b: 1 + 1 - 1 = 1      → fits
//	a node without the zone label      → "... (missing required label)", which no eviction fixes
//
// Score (whenUnsatisfiable: ScheduleAnyway, and the system defaults),
// scoring.go. Each feasible node collects, per constraint whose key it
// has,
//
//	count × log(domains + 2) + (maxSkew - 1)
//
// (the log keeps a key with many small domains, such as hostname, from
// drowning one with few; maxSkew - 1 blurs small differences), the count
// of kubernetes.io/hostname being the pod's own node; then, fewer being
// better,
//
//	score(node) = 100 × (max + min - raw(node)) / max
//
// System defaults (kube-scheduler's defaultingType: System): hostname
// maxSkew 3 and topology.kubernetes.io/zone maxSkew 5, both ScheduleAnyway,
// selecting the pods that every Service selecting the pod, and its
// controlling ReplicaSet or ReplicationController, select. A pod with
// neither is not spread. Worked example, seed 003 §十一.4.2: ReplicaSet
// my-app has one pod on node01; node01, node02, node03 have no zone
// label, so only hostname counts, with log(3 + 2) = 1.61:
//
//	node01  1 × 1.61 + 2 = 3.61 → 4     100 × (4 + 2 - 4) / 4 =  50
//	node02  0 × 1.61 + 2        → 2     100 × (4 + 2 - 2) / 4 = 100
//	node03                        2                             100
//
// × weight 2: node01 loses 100 to spreading, and wins back 200 with its
// preferred node affinity (NodeAffinity, weight 2): the second replica
// joins the first, as in Kubernetes.
//
// Where things live:
//
//	file                    what it holds
//	pod_topology_spread.go  the plugin and the events it registers for
//	constraints.go          the pod's constraints parsed (or the default ones), counting matching pods on a node, nodeAffinityPolicy and nodeTaintsPolicy
//	domain_counts.go        the counts per topology domain and their global minimum (minDomains)
//	filtering.go            PreFilter and Filter: whenUnsatisfiable DoNotSchedule
//	scoring.go              PreScore and Score: whenUnsatisfiable ScheduleAnyway
package podtopologyspread

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "PodTopologySpread"

// Reasons, worded as in Kubernetes.
const (
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ErrReasonNodeLabelNotMatch   = ErrReasonConstraintsNotMatch + " (missing required label)"
)

// PodTopologySpread is the plugin.
type PodTopologySpread struct {
	handle framework.Handle // Services, ReplicaSets, ReplicationControllers: the default selector
}

// New returns the plugin.
func New(h framework.Handle) *PodTopologySpread { return &PodTopologySpread{handle: h} }

func (*PodTopologySpread) Name() string { return Name }

// EventsToRegister: a pod bound, deleted or relabelled changes a domain's
// count; a node added, deleted, relabelled or (re)tainted changes the
// domains, or which nodes count.
func (*PodTopologySpread) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.AssignedPod, ActionType: framework.Add | framework.Delete | framework.UpdatePodLabel},
		{Resource: framework.Node, ActionType: framework.Add | framework.Delete | framework.UpdateNodeLabel | framework.UpdateNodeTaint},
	}
}

// Compile-time checks of the extension points the plugin implements.
var (
	_ framework.PreFilterPlugin      = (*PodTopologySpread)(nil)
	_ framework.FilterPlugin         = (*PodTopologySpread)(nil)
	_ framework.PreFilterExtensions  = (*PodTopologySpread)(nil)
	_ framework.PreScorePlugin       = (*PodTopologySpread)(nil)
	_ framework.NormalizeScorePlugin = (*PodTopologySpread)(nil)
	_ framework.EnqueueExtensions    = (*PodTopologySpread)(nil)
)

// hasAllKeys reports whether a node's labels have every constraint's
// topologyKey: a node without one is in no domain of it.
func hasAllKeys(nodeLabels map[string]string, cs []constraint) bool {
	for i := range cs {
		if _, ok := nodeLabels[cs[i].topologyKey]; !ok {
			return false
		}
	}
	return true
}

// isHostname: a constraint on kubernetes.io/hostname has one domain per
// node, so Score counts the node's own pods instead of a domain map.
func isHostname(c *constraint) bool { return c.topologyKey == corev1.LabelHostname }
