package dashboard

import (
	"net/http"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
)

// Snapshot is the first message of a stream: the cluster as the
// dashboard's caches hold it, and the numbers so far. The changes that
// follow apply on top of it.
//
// A small cluster's snapshot has every pod. A big one's would not be
// read by anyone and would cost the browser seconds and hundreds of
// megabytes (150,000 pods are ~28 MB of JSON), so above
// snapshotAllPodsUpTo pods it has each node's count of pods and only
// its first podsPerNodeSent pods by name: enough to click one and see
// its 13 steps. The page then keeps counts, not every pod.
type Snapshot struct {
	Nodes   []Change `json:"nodes"`
	Pods    []Change `json:"pods"`
	Samples []Sample `json:"samples"`
	Faults  Access   `json:"faults"`
	// TotalPods is how many pods the caches hold; len(Pods) unless
	// Bounded.
	TotalPods int `json:"totalPods"`
	// Bounded says Pods is not every pod: Counts then has each node's
	// count of pods ("" for the pods not yet scheduled).
	Bounded bool           `json:"bounded,omitempty"`
	Counts  map[string]int `json:"counts,omitempty"`
}

// snapshotAllPodsUpTo is the most pods a snapshot sends in full: 5,000
// pods are ~1 MB of JSON, which a browser parses in tens of milliseconds
// and the cluster view (cluster.js, which draws a bounded number of rows)
// handles without a stall.
const snapshotAllPodsUpTo = 5000

// podsPerNodeSent is how many pods of each node a bounded snapshot sends:
// what a learner can click on; 5,000 nodes × 10 is still ~10 MB, so at
// that size the page shows the counts first.
const podsPerNodeSent = 10

func (s *Server) snapshot(r *http.Request) Snapshot {
	snap := Snapshot{Nodes: []Change{}, Pods: []Change{}, Samples: s.history.Samples(), Faults: s.access(r)}
	for _, obj := range s.watcher.Cache(client.Nodes).List() {
		n := obj.(*corev1.Node)
		snap.Nodes = append(snap.Nodes, Change{Type: "LISTED", Kind: "Node", Name: n.Name, RV: n.ResourceVersion, Node: summarizeNode(n)})
	}
	sort.Slice(snap.Nodes, func(i, j int) bool { return snap.Nodes[i].Name < snap.Nodes[j].Name })
	pods := s.watcher.Cache(client.Pods).List()
	snap.TotalPods = len(pods)
	podChange := func(p *corev1.Pod) Change {
		return Change{Type: "LISTED", Kind: "Pod", Namespace: p.Namespace, Name: p.Name, RV: p.ResourceVersion, Pod: summarizePod(p)}
	}
	if len(pods) <= snapshotAllPodsUpTo {
		for _, obj := range pods {
			snap.Pods = append(snap.Pods, podChange(obj.(*corev1.Pod)))
		}
		return snap
	}
	// Bounded: count every node's pods, send the first few of each.
	snap.Bounded, snap.Counts = true, map[string]int{}
	byNode := map[string][]*corev1.Pod{}
	for _, obj := range pods {
		p := obj.(*corev1.Pod)
		snap.Counts[p.Spec.NodeName]++
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	for _, ps := range byNode {
		sort.Slice(ps, func(i, j int) bool { return ps[i].Namespace+"/"+ps[i].Name < ps[j].Namespace+"/"+ps[j].Name })
		for _, p := range ps[:min(len(ps), podsPerNodeSent)] {
			snap.Pods = append(snap.Pods, podChange(p))
		}
	}
	return snap
}
