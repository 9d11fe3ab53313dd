package config

import (
	"testing"
	"time"
)

// A mirror a user deleted stays gone for MirrorRecreateDelay; a static
// pod is known to the API server by its mirror's UID until forgotten.
func TestStaticPodsRememberMirrors(t *testing.T) {
	var s StaticPods
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	if s.RecreateWait("kube-system/etcd-node01", now) != 0 {
		t.Error("a mirror never deleted must wait")
	}
	s.MirrorDeleted("kube-system/etcd-node01", now)
	if got := s.RecreateWait("kube-system/etcd-node01", now.Add(300*time.Millisecond)); got != 700*time.Millisecond {
		t.Errorf("wait = %v, want 700ms", got)
	}
	if got := s.RecreateWait("kube-system/etcd-node01", now.Add(MirrorRecreateDelay)); got != 0 {
		t.Errorf("wait after the delay = %v, want 0", got)
	}

	if s.APIUID("hash") != "hash" {
		t.Error("a pod without a mirror is not known by its own UID")
	}
	s.SetMirrorUID("hash", "mirror-uid")
	if s.APIUID("hash") != "mirror-uid" {
		t.Error("a static pod is not known by its mirror's UID")
	}
	s.Forget("hash")
	if s.APIUID("hash") != "hash" {
		t.Error("Forget kept the mirror's UID")
	}

	sp := &StaticPod{Hash: "h1", File: "etcd.yaml"}
	if old := s.Replace(map[string]*StaticPod{"kube-system/etcd-node01": sp}); len(old) != 0 {
		t.Errorf("first Replace returned %v", old)
	}
	if s.Named("kube-system/etcd-node01") != sp || s.Named("other") != nil {
		t.Error("Named does not find the static pods read")
	}
}
