package metricsserver

import (
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// freshContainerMinResolution is how long a container must have run for
// its start time to stand in as its first point (metrics-server's
// freshContainerMinMetricsResolution): a younger one's rate would be noise.
const freshContainerMinResolution = 10 * time.Second

// storage keeps the last two points of every node and container, as
// metrics-server's in-memory storage does: CPU is a rate, so it takes two
// cumulative readings, and nothing older is needed.
type storage struct {
	resolution time.Duration

	mu                   sync.RWMutex
	lastNodes, prevNodes map[string]MetricsPoint
	lastPods, prevPods   map[PodRef]PodPoints
}

func newStorage(resolution time.Duration) *storage {
	return &storage{resolution: resolution}
}

// Usage is a node's or container's usage over a window, as the API serves it.
type Usage struct {
	Timestamp time.Time
	Window    time.Duration
	Resources corev1.ResourceList
}

// Store takes the points of a scrape of every node. A point newer than
// the last moves the last to prev; a point no newer keeps prev (unless
// prev is not older than it: then the node waits for a second point
// again). A container seen for the first time that started between 10 s
// and one resolution ago gets its start time, with no CPU used, as its
// previous point, so that a new pod shows up after one scrape.
func (s *storage) Store(batch *MetricsBatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lastNodes, prevNodes := map[string]MetricsPoint{}, map[string]MetricsPoint{}
	for name, point := range batch.Nodes {
		lastNodes[name] = point
		last, seen := s.lastNodes[name]
		if prev, ok := s.previous(last, s.prevNodes[name], point, seen); ok {
			prevNodes[name] = prev
		}
	}
	lastPods, prevPods := map[PodRef]PodPoints{}, map[PodRef]PodPoints{}
	for ref, containers := range batch.Pods {
		lastPods[ref], prevPods[ref] = PodPoints{}, PodPoints{}
		for name, point := range containers {
			lastPods[ref][name] = point
			last, seen := s.lastPods[ref][name]
			if prev, ok := s.previous(last, s.prevPods[ref][name], point, seen); ok {
				prevPods[ref][name] = prev
			} else if !seen && s.fresh(point) {
				prevPods[ref][name] = MetricsPoint{StartTime: point.StartTime, Timestamp: point.StartTime}
			}
		}
	}
	s.lastNodes, s.prevNodes, s.lastPods, s.prevPods = lastNodes, prevNodes, lastPods, prevPods
}

// points is how many nodes and containers have two points, a rate to
// serve: what metrics-server's metrics_server_storage_points counts.
func (s *storage) points() (nodes, containers int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, pod := range s.prevPods {
		containers += len(pod)
	}
	return len(s.prevNodes), containers
}

// previous is the point to keep as prev beside the new point.
func (s *storage) previous(last, prev, point MetricsPoint, seen bool) (MetricsPoint, bool) {
	switch {
	case !seen || last.Timestamp.IsZero():
		return MetricsPoint{}, false
	case point.Timestamp.After(last.Timestamp):
		return last, true
	case !prev.Timestamp.IsZero() && prev.Timestamp.Before(point.Timestamp):
		return prev, true
	}
	return MetricsPoint{}, false
}

// fresh says whether a container started recently enough for its start
// time to be its first point.
func (s *storage) fresh(p MetricsPoint) bool {
	if p.StartTime.IsZero() {
		return false
	}
	age := p.Timestamp.Sub(p.StartTime)
	return age >= freshContainerMinResolution && age <= s.resolution
}

// NodeUsage is a node's usage, false until it has two points.
func (s *storage) NodeUsage(name string) (Usage, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	last, ok1 := s.lastNodes[name]
	prev, ok2 := s.prevNodes[name]
	if !ok1 || !ok2 {
		return Usage{}, false
	}
	u, err := usageBetween(last, prev)
	return u, err == nil
}

// PodUsage is one usage per container of the pod, by container
// name; false unless every container has two points.
func (s *storage) PodUsage(ref PodRef) (map[string]Usage, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	lasts, ok := s.lastPods[ref]
	if !ok || len(lasts) == 0 {
		return nil, false
	}
	usages := map[string]Usage{}
	for name, last := range lasts {
		prev, ok := s.prevPods[ref][name]
		if !ok {
			return nil, false
		}
		u, err := usageBetween(last, prev)
		if err != nil {
			return nil, false
		}
		usages[name] = u
	}
	return usages, true
}

// usageBetween is metrics-server's resourceUsage: CPU as the rate
// between two cumulative readings (in nanocores), memory as the last
// working set. A restarted container (a later start, a CPU count that
// went down) has no usage until it has two points of its own.
func usageBetween(last, prev MetricsPoint) (Usage, error) {
	if last.StartTime.Before(prev.StartTime) {
		return Usage{}, fmt.Errorf("unexpected decrease in startTime of node/container")
	}
	if last.CumulativeCPUUsed < prev.CumulativeCPUUsed {
		return Usage{}, fmt.Errorf("unexpected decrease in cumulative CPU usage value")
	}
	window := last.Timestamp.Sub(prev.Timestamp)
	if window <= 0 {
		return Usage{}, fmt.Errorf("no time between the points")
	}
	nanocores := float64(last.CumulativeCPUUsed-prev.CumulativeCPUUsed) / window.Seconds()
	return Usage{Timestamp: last.Timestamp, Window: window, Resources: corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewScaledQuantity(int64(nanocores), resource.Nano),
		corev1.ResourceMemory: *resource.NewQuantity(int64(last.MemoryUsage), resource.BinarySI),
	}}, nil
}
