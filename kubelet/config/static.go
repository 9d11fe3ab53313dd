package config

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// StaticPod is one manifest as last read: the mirror pod to create for
// it, its hash and where it came from.
type StaticPod struct {
	Mirror *corev1.Pod
	Hash   string
	File   string
}

// MirrorRecreateDelay is how long a mirror a user deleted stays gone.
// `kubectl delete` waits until no pod of that name and UID is left; a
// new mirror within milliseconds can win that race and keep it waiting.
const MirrorRecreateDelay = time.Second

// StaticPods is the node's static pods and their mirrors, under its own
// lock: the manifests as last read, the API server's UID of each static
// pod's mirror, and the mirrors a user deleted. Its zero value is ready
// to use.
type StaticPods struct {
	mu         sync.Mutex
	byKey      map[string]*StaticPod   // by mirror key, "namespace/name"
	mirrorUIDs map[types.UID]types.UID // a static pod's hash → its mirror's UID
	// mirrorDeleted: when a user deleted a static pod's mirror, by key.
	mirrorDeleted map[string]time.Time
}

// Replace makes next the static pods, returning those it replaces.
func (s *StaticPods) Replace(next map[string]*StaticPod) (old map[string]*StaticPod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, s.byKey = s.byKey, next
	return old
}

// Named is the static pod whose mirror is key, or nil.
func (s *StaticPods) Named(key string) *StaticPod {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKey[key]
}

// MirrorDeleted records that a user deleted the mirror named key at now.
func (s *StaticPods) MirrorDeleted(key string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mirrorDeleted == nil {
		s.mirrorDeleted = map[string]time.Time{}
	}
	s.mirrorDeleted[key] = now
}

// RecreateWait is how much longer, at now, the mirror named key stays
// gone after a user deleted it (MirrorRecreateDelay in all).
func (s *StaticPods) RecreateWait(key string, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.mirrorDeleted[key]
	if !ok {
		return 0
	}
	wait := MirrorRecreateDelay - now.Sub(at)
	if wait <= 0 {
		delete(s.mirrorDeleted, key)
		return 0
	}
	return wait
}

// SetMirrorUID records the API server's UID of the mirror of the static
// pod whose UID (its hash) is uid.
func (s *StaticPods) SetMirrorUID(uid, mirror types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mirrorUIDs == nil {
		s.mirrorUIDs = map[types.UID]types.UID{}
	}
	s.mirrorUIDs[uid] = mirror
}

// Forget drops the mirror UID of a pod that is gone.
func (s *StaticPods) Forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mirrorUIDs, uid)
}

// APIUID is the UID the API server knows a pod by: a static pod's is its
// mirror's.
func (s *StaticPods) APIUID(uid types.UID) types.UID {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.mirrorUIDs[uid]; ok {
		return m
	}
	return uid
}
