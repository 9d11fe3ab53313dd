package volumemanager

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// State is what the volume manager remembers of the node's pods, under
// its own lock: whose volumes were set up once (a later failure to
// refresh them then keeps their last content) and whose Multi-Attach
// error was reported (the attach-detach controller reports it once,
// MultiAttachErrorReported). Its zero value is ready to use.
type State struct {
	mu       sync.Mutex
	mounted  map[types.UID]bool
	reported map[types.UID]bool
}

// SetUp records a setup of the pod's volumes, ok if it succeeded, and
// says whether they had been set up before.
func (s *State) SetUp(uid types.UID, ok bool) (before bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before = s.mounted[uid]
	if ok {
		if s.mounted == nil {
			s.mounted = map[types.UID]bool{}
		}
		s.mounted[uid] = true
	}
	return before
}

// ReportMultiAttach says whether to record the pod's Multi-Attach event:
// the first time only.
func (s *State) ReportMultiAttach(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reported[uid] {
		return false
	}
	if s.reported == nil {
		s.reported = map[types.UID]bool{}
	}
	s.reported[uid] = true
	return true
}

// MultiAttachReported says whether the pod's Multi-Attach event was recorded.
func (s *State) MultiAttachReported(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reported[uid]
}

// Forget drops what is known of the pod: its volumes are torn down.
func (s *State) Forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mounted, uid)
	delete(s.reported, uid)
}
