package dashboard

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Sighting is when the dashboard's watch delivered an object's
// milestones. The API keeps none of these times: they are the
// dashboard's own, taken as its informer received each event, with
// the dashboard's clock. Zero means not seen live (the object was
// already so when the dashboard listed it, or never became so).
type Sighting struct {
	Added time.Time // the watch's ADDED event
	Bound time.Time // the first event with spec.nodeName set (a pod)
	Ready time.Time // the first event with the Ready condition True (a pod)
}

// Sightings holds a Sighting per object UID, written by the informers'
// handlers, read by the steps view; an object's goes when it is deleted.
type Sightings struct {
	mu  sync.Mutex
	uid map[types.UID]Sighting
}

// NewSightings returns an empty record.
func NewSightings() *Sightings { return &Sightings{uid: map[types.UID]Sighting{}} }

// SeeObject notes an ADDED event's delivery time.
func (s *Sightings) SeeObject(typ string, uid types.UID, at time.Time) {
	if typ != "ADDED" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.uid[uid]
	v.Added = at
	s.uid[uid] = v
}

// SeePod notes a pod's ADDED, and the first live events in which it is
// bound and ready. A pod found already bound by the first list is
// marked so that a later event does not pass for the binding's delivery.
func (s *Sightings) SeePod(typ string, p *corev1.Pod, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bound, ready := p.Spec.NodeName != "", podReady(p)
	v := s.uid[p.UID]
	switch typ {
	case "LISTED":
		s.uid[p.UID] = Sighting{Bound: listedMarker(bound), Ready: listedMarker(ready)}
		return
	case "ADDED":
		v.Added = at
	}
	if bound && v.Bound.IsZero() {
		v.Bound = at
	}
	if ready && v.Ready.IsZero() {
		v.Ready = at
	}
	s.uid[p.UID] = v
}

// listedMarker keeps a milestone that had already happened at the first
// list from being set by a later event: the Unix epoch stands for "before
// the dashboard watched", and the steps view shows no time for it.
func listedMarker(happened bool) time.Time {
	if happened {
		return time.Unix(0, 0)
	}
	return time.Time{}
}

// Get returns uid's sighting.
func (s *Sightings) Get(uid types.UID) Sighting {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uid[uid]
}

// Forget drops uid's sighting: the object is gone.
func (s *Sightings) Forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.uid, uid)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
