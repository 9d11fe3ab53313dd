package cache

import (
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
}

// NewEmptySnapshot returns a snapshot to be filled by UpdateSnapshot.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}, listIndex: map[string]int{}}
}

// NewSnapshot builds a snapshot straight from node infos (each with a
// Node): for tests and benchmarks.
func NewSnapshot(nodes ...*framework.NodeInfo) *Snapshot {
	s := NewEmptySnapshot()
	for _, n := range nodes {
		s.nodeInfoMap[n.Node().Name] = n
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
}

// UpdateSnapshot brings s up to date: it copies every node changed since
// s was last updated, walking the cache's list from the most recently
// changed node and stopping at the first one s already has.
func (c *Cache) UpdateSnapshot(s *Snapshot) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	membershipChanged := false
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
	if membershipChanged {
		s.rebuildList()
	}
}
