// Package selectorspread spreads the replicas of one controller over
// nodes and zones.
//
// Seed 003 priority SelectorSpreadPriority ("对同属一个 Deployment 或者 RC
// 下面的的多个 Pod 副本，尽量调度到多个不同的节点上 ... 运行 Pod 越少的节点
// 权重越高"). Kubernetes plugin: SelectorSpread. Kubernetes' default
// profile replaced it in v1.20 by PodTopologySpread with its system
// default constraints (package podtopologyspread, which mkube's default
// profile uses too); kubescheduler.config.k8s.io/v1 no longer accepts it
// (v1.25) and kube-scheduler dropped its code in v1.29. mkube keeps it in
// its registry, outside the default profile, for a --config that names
// it, and to show the older rule.
//
// Peers: the pods in the pod's namespace, not being deleted, that
//   - are controlled by the same ReplicaSet, ReplicationController or
//     StatefulSet (its controller ownerReference), if the pod has one, and
//   - match the selector of every Service that selects the pod.
//
// A pod with neither such a controller nor a Service has no peers and the
// plugin skips it. Kubernetes ANDs the selectors of the controllers and
// Services selecting the pod; following the controller's ownerReference
// gives the same pods as its selector.
//
// Rule, with count(node) = the peers on the node:
//
//	nodeScore(n) = 100 × (maxCount - count(n)) / maxCount        (100 if maxCount is 0)
//
// and, when nodes carry zone labels (topology.kubernetes.io/region and
// zone), spreading over zones counts twice as much as over nodes:
//
//	zoneCount(z) = Σ count over the feasible nodes of zone z
//	zoneScore(n) = 100 × (maxZoneCount - zoneCount(zone of n)) / maxZoneCount
//	score(n)     = 1/3 × nodeScore(n) + 2/3 × zoneScore(n)     (nodeScore alone for a node without zone)
//
// Worked example: ReplicaSet web has pods on node01 (zone a) ×2 and
// node03 (zone b) ×1; node02 (zone a) has none. maxCount 2; zones a: 2,
// b: 1, maxZoneCount 2.
//
//	node01  node 100×(2-2)/2 = 0     zone a 0    → 0
//	node02  node 100×(2-0)/2 = 100   zone a 0    → 100/3        = 33
//	node03  node 100×(2-1)/2 = 50    zone b 50   → 50/3 + 100/3 = 50  ← the next replica goes here
//
// node02 is emptier, but node03 is in the zone with fewer replicas: losing
// zone a would then not take most of web down.
//
// It all lives in selector_spread.go.
package selectorspread

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "SelectorSpread"

// zoneWeighting is Kubernetes' share of the zone spread in the score: 2/3
// zone, 1/3 node.
const zoneWeighting float64 = 2.0 / 3.0

const preScoreStateKey framework.StateKey = "PreScore" + Name

var skip = framework.NewStatus(framework.Skip, "the pod has no ReplicaSet, ReplicationController, StatefulSet or Service")

// spreadKinds are the controllers whose replicas are spread.
var spreadKinds = map[string]bool{"ReplicaSet": true, "ReplicationController": true, "StatefulSet": true}

// SelectorSpread is the plugin.
type SelectorSpread struct {
	handle framework.Handle // the Services
}

// New returns the plugin.
func New(h framework.Handle) *SelectorSpread { return &SelectorSpread{handle: h} }

func (*SelectorSpread) Name() string { return Name }

// peers says which pods count as the incoming pod's fellow replicas.
type peers struct {
	namespace  string
	controller types.UID // "" when the pod has no controller that spreads
	services   []labels.Selector
}

func (p *peers) matches(pod *corev1.Pod) bool {
	if pod.Namespace != p.namespace || pod.DeletionTimestamp != nil {
		return false
	}
	if p.controller != "" {
		if ref := metav1.GetControllerOfNoCopy(pod); ref == nil || ref.UID != p.controller {
			return false
		}
	}
	for _, sel := range p.services {
		if !sel.Matches(labels.Set(pod.Labels)) {
			return false
		}
	}
	return true
}

type preScoreState struct {
	peers peers
	zones []string // zone key of each feasible node, in PreScore's order
}

// PreScore finds the pod's controller and Services and the zone of each
// feasible node; a pod with neither skips the plugin.
func (pl *SelectorSpread) PreScore(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, _ framework.NodeInfoLister) *framework.Status {
	p := peers{namespace: pod.Pod.Namespace, services: pl.handle.ServicesSelecting(pod.Pod)}
	if ref := metav1.GetControllerOfNoCopy(pod.Pod); ref != nil && spreadKinds[ref.Kind] {
		p.controller = ref.UID
	}
	if p.controller == "" && len(p.services) == 0 {
		return skip
	}
	s := &preScoreState{peers: p, zones: make([]string, len(nodes))}
	for i, n := range nodes {
		s.zones[i] = zoneKey(n.Node())
	}
	state.Write(preScoreStateKey, s)
	return nil
}

// zoneKey is the node's failure domain, region and zone together (zone
// names repeat across regions); "" if it has neither label.
func zoneKey(node *corev1.Node) string {
	region, zone := node.Labels[corev1.LabelTopologyRegion], node.Labels[corev1.LabelTopologyZone]
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

// Score counts the peers on the node.
func (*SelectorSpread) Score(state *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	var count int64
	for _, p := range node.Pods {
		if s.peers.matches(p.Pod) {
			count++
		}
	}
	return count, nil
}

// NormalizeScore turns counts into scores, fewer peers scoring higher, by
// node and by zone.
func (*SelectorSpread) NormalizeScore(state *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	s, err := framework.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	var maxCount, maxZoneCount int64
	zoneCounts := map[string]int64{}
	for i := range scores {
		maxCount = max(maxCount, scores[i].Score)
		if z := s.zones[i]; z != "" {
			zoneCounts[z] += scores[i].Score
		}
	}
	for _, c := range zoneCounts {
		maxZoneCount = max(maxZoneCount, c)
	}
	const maxScore = float64(framework.MaxNodeScore)
	for i := range scores {
		f := maxScore
		if maxCount > 0 {
			f = maxScore * float64(maxCount-scores[i].Score) / float64(maxCount)
		}
		if z := s.zones[i]; z != "" {
			zoneScore := maxScore
			if maxZoneCount > 0 {
				zoneScore = maxScore * float64(maxZoneCount-zoneCounts[z]) / float64(maxZoneCount)
			}
			f = f*(1-zoneWeighting) + zoneWeighting*zoneScore
		}
		scores[i].Score = int64(f)
	}
	return nil
}
