package nodestatus

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"
)

// State is what the node status heartbeat remembers between beats, under
// its own lock: the status last written (when, its images, why the
// runtime was down, memory pressure), when the runtime last answered,
// and the node's containers' memory as last read.
type State struct {
	clock clock.PassiveClock
	// reportFrequency is NodeStatusReportFrequency: 0 writes the status
	// and reads the stats every heartbeat.
	reportFrequency time.Duration

	mu           sync.Mutex
	lastReport   time.Time
	lastImages   []corev1.ContainerImage
	lastDown     string
	lastPressure bool
	runtimeOK    time.Time // when the runtime last answered a heartbeat
	// memoryUsed is the node's containers' memory as last read
	// (statsAt), statsStale set when one of them started or stopped.
	memoryUsed int64
	statsAt    time.Time
	statsStale bool
}

// NewState returns the state of a node whose runtime answered just now
// (when its kubelet connected).
func NewState(clk clock.PassiveClock, reportFrequency time.Duration) *State {
	return &State{clock: clk, reportFrequency: reportFrequency, runtimeOK: clk.Now()}
}

// Changed says whether a status of these images, runtime failure and
// memory pressure is worth writing: the last one is reportFrequency old,
// or differs.
func (s *State) Changed(images []corev1.ContainerImage, down string, pressure bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock.Since(s.lastReport) >= s.reportFrequency || down != s.lastDown ||
		pressure != s.lastPressure || !equality.Semantic.DeepEqual(images, s.lastImages)
}

// Reported records the status just written.
func (s *State) Reported(images []corev1.ContainerImage, down string, pressure bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastReport, s.lastImages, s.lastDown = s.clock.Now(), images, down
	s.lastPressure = pressure
}

// StatsDue says whether this heartbeat reads the node's container stats
// (every one if reportFrequency is 0; else when a container started or
// stopped since, or the last reading is reportFrequency old), and counts
// them as read.
func (s *State) StatsDue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	due := s.reportFrequency <= 0 || s.statsStale || s.statsAt.IsZero() ||
		s.clock.Since(s.statsAt) >= s.reportFrequency
	s.statsStale = false
	return due
}

// ContainersChanged makes the next heartbeat read the container stats.
func (s *State) ContainersChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statsStale = true
}

// RuntimeFailed records a heartbeat the runtime did not answer, whose
// stats, if statsRead, are then read again at the next one. It says
// whether the runtime has not answered for downAfter, and the images of
// the status last written, which a node whose runtime is down keeps.
func (s *State) RuntimeFailed(statsRead bool, downAfter time.Duration) (down bool, images []corev1.ContainerImage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if statsRead {
		s.statsStale = true
	}
	return s.clock.Since(s.runtimeOK) >= downAfter, s.lastImages
}

// RuntimeAnswered records a heartbeat the runtime answered, with the
// memory its containers use if the stats were read (used not nil), and
// returns the memory last read.
func (s *State) RuntimeAnswered(used *int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runtimeOK = s.clock.Now()
	if used != nil {
		s.memoryUsed, s.statsAt = *used, s.clock.Now()
	}
	return s.memoryUsed
}
