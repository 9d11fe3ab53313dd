package cache

import (
	"maps"
	"sort"

	"github.com/mkube/mkube/scheduler/framework"
)

// Snapshot is the cluster as one scheduling cycle sees it: a copy of the
// cache's NodeInfos, owned by the scheduling loop alone.
type Snapshot struct {
	nodeInfoMap  map[string]*framework.NodeInfo
	nodeInfoList []*framework.NodeInfo // sorted by node name
	listIndex    map[string]int        // node name → position in nodeInfoList
	generation   int64                 // the cache generation this snapshot reflects
	// The nodes of nodeInfoList that hold pods with inter-pod affinity
	// terms, and with required anti-affinity terms: InterPodAffinity visits
	// only these for a pod without terms of its own. Rebuilt, O(nodes), only
	// when such a node changes.
	havePodsWithAffinityList             []*framework.NodeInfo
	havePodsWithRequiredAntiAffinityList []*framework.NodeInfo
	// imageNumNodes is the cache's count of nodes per image, copied when it
	// changed (imageGeneration).
	imageNumNodes   map[string]int
	imageGeneration int64
}

// NewEmptySnapshot returns a snapshot to be filled by UpdateSnapshot.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}, listIndex: map[string]int{}}
}

// NewSnapshot builds a snapshot straight from node infos (each with a
// Node): for tests and benchmarks.
func NewSnapshot(nodes ...*framework.NodeInfo) *Snapshot {
	s := NewEmptySnapshot()
	s.imageNumNodes = map[string]int{}
	for _, n := range nodes {
		s.nodeInfoMap[n.Node().Name] = n
		for name := range n.ImageSizes {
			s.imageNumNodes[name]++
		}
	}
	s.rebuildList()
	return s
}

// List returns the nodes, sorted by name. The slice and the NodeInfos
// belong to the snapshot: read only.
func (s *Snapshot) List() []*framework.NodeInfo { return s.nodeInfoList }

// Get returns one node.
func (s *Snapshot) Get(name string) (*framework.NodeInfo, bool) {
	n, ok := s.nodeInfoMap[name]
	return n, ok
}

// NumNodes is the number of nodes.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }

// HavePodsWithAffinityList returns the nodes holding a pod with an
// inter-pod affinity or anti-affinity term.
func (s *Snapshot) HavePodsWithAffinityList() []*framework.NodeInfo {
	return s.havePodsWithAffinityList
}

// HavePodsWithRequiredAntiAffinityList returns the nodes holding a pod
// with a required anti-affinity term.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() []*framework.NodeInfo {
	return s.havePodsWithRequiredAntiAffinityList
}

// NumNodesWithImage is how many nodes report image name in status.images.
func (s *Snapshot) NumNodesWithImage(name string) int { return s.imageNumNodes[name] }

var _ framework.NodeInfoLister = (*Snapshot)(nil)

func (s *Snapshot) rebuildList() {
	s.nodeInfoList = s.nodeInfoList[:0]
	for _, n := range s.nodeInfoMap {
		s.nodeInfoList = append(s.nodeInfoList, n)
	}
	sort.Slice(s.nodeInfoList, func(i, j int) bool { return s.nodeInfoList[i].Node().Name < s.nodeInfoList[j].Node().Name })
	clear(s.listIndex)
	for i, n := range s.nodeInfoList {
		s.listIndex[n.Node().Name] = i
	}
	s.rebuildAffinityLists()
}

func (s *Snapshot) rebuildAffinityLists() {
	s.havePodsWithAffinityList = s.havePodsWithAffinityList[:0]
	s.havePodsWithRequiredAntiAffinityList = s.havePodsWithRequiredAntiAffinityList[:0]
	for _, n := range s.nodeInfoList {
		if len(n.PodsWithAffinity) > 0 {
			s.havePodsWithAffinityList = append(s.havePodsWithAffinityList, n)
		}
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			s.havePodsWithRequiredAntiAffinityList = append(s.havePodsWithRequiredAntiAffinityList, n)
		}
	}
}

// UpdateSnapshot brings s up to date: it copies every node changed since
// s was last updated, walking the cache's list from the most recently
// changed node and stopping at the first one s already has.
func (c *Cache) UpdateSnapshot(s *Snapshot) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	membershipChanged, affinityChanged := false, false
	for item := c.headNode; item != nil && item.info.Generation > s.generation; item = item.next {
		if item.info.Node() == nil {
			// Only pods name this node: it is not schedulable.
			if _, ok := s.nodeInfoMap[item.name]; ok {
				delete(s.nodeInfoMap, item.name)
				membershipChanged = true
			}
			continue
		}
		clone := item.info.Clone()
		if old := s.nodeInfoMap[item.name]; len(clone.PodsWithAffinity) > 0 || (old != nil && len(old.PodsWithAffinity) > 0) {
			affinityChanged = true // the lists hold the old NodeInfo, or miss the new one
		}
		s.nodeInfoMap[item.name] = clone
		if i, ok := s.listIndex[item.name]; ok {
			s.nodeInfoList[i] = clone
		} else {
			membershipChanged = true
		}
	}
	s.generation = c.generation
	if len(s.nodeInfoMap) > c.nodeCount {
		// Nodes deleted from the cache altogether are not in its list.
		for name := range s.nodeInfoMap {
			if item, ok := c.nodes[name]; !ok || item.info.Node() == nil {
				delete(s.nodeInfoMap, name)
			}
		}
		membershipChanged = true
	}
	switch {
	case membershipChanged:
		s.rebuildList()
	case affinityChanged:
		s.rebuildAffinityLists()
	}
	if s.imageGeneration != c.imageGeneration || s.imageNumNodes == nil {
		s.imageNumNodes = maps.Clone(c.imageNodes)
		s.imageGeneration = c.imageGeneration
	}
}
