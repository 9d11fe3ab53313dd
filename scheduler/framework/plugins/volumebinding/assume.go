package volumebinding

import (
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// assumeCache is what the plugin has decided but the informers do not
// show yet, Kubernetes' AssumeCache for volumes and claims: from Reserve
// until the end of PreBind, a volume chosen for a claim (with its
// claimRef set) and a claim to provision (with its selected-node
// annotation). Every lookup of the plugin goes through it, so the next
// pod's cycle, which may run before the API server has heard of the
// choice, does not give the same volume to another claim.
//
// An assumed object stands in for the informer's while the informer's is
// not newer (its resourceVersion, an etcd revision, is not greater): once
// the informer has caught up with what PreBind wrote, or moved past it,
// the informer's wins and the assumption is dropped.
//
// It is shared by the scheduling goroutine (Filter, Reserve) and the
// binding goroutines (PreBind, Unreserve), hence the lock.
type assumeCache struct {
	mu      sync.Mutex
	volumes map[string]*corev1.PersistentVolume      // by name
	claims  map[string]*corev1.PersistentVolumeClaim // by namespace/name
}

func newAssumeCache() *assumeCache {
	return &assumeCache{volumes: map[string]*corev1.PersistentVolume{}, claims: map[string]*corev1.PersistentVolumeClaim{}}
}

func (a *assumeCache) assumeVolume(pv *corev1.PersistentVolume) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.volumes[pv.Name] = pv
}

func (a *assumeCache) assumeClaim(claim *corev1.PersistentVolumeClaim) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.claims[claimKey(claim)] = claim
}

// forget drops what was assumed for r's claims: they are bound (the
// informers say so from now on), or the pod gave them back.
func (a *assumeCache) forget(r *reserved) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range r.static {
		delete(a.volumes, b.pv.Name)
	}
	for _, c := range r.provision {
		delete(a.claims, claimKey(c))
	}
}

// volume is pv (the informer's, ok if it exists) or the assumed version.
func (a *assumeCache) volume(name string, pv *corev1.PersistentVolume, ok bool) (*corev1.PersistentVolume, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	assumed, has := a.volumes[name]
	switch {
	case !has:
		return pv, ok
	case !ok || newer(pv, assumed): // deleted, or the informer moved past it
		delete(a.volumes, name)
		return pv, ok
	}
	return assumed, true
}

// claim is volume for claims.
func (a *assumeCache) claim(key string, claim *corev1.PersistentVolumeClaim, ok bool) (*corev1.PersistentVolumeClaim, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	assumed, has := a.claims[key]
	switch {
	case !has:
		return claim, ok
	case !ok || newer(claim, assumed):
		delete(a.claims, key)
		return claim, ok
	}
	return assumed, true
}

// newer reports whether obj's resourceVersion is greater than than's.
// Versions that are not numbers (none is, from mkube's API server) are
// only told apart: another one counts as newer.
func newer(obj, than metav1.Object) bool {
	a, errA := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	b, errB := strconv.ParseUint(than.GetResourceVersion(), 10, 64)
	if errA != nil || errB != nil {
		return obj.GetResourceVersion() != than.GetResourceVersion()
	}
	return a > b
}

// claim, volume and volumes are the plugin's view: the informers', with
// what it assumed.
func (pl *VolumeBinding) claim(namespace, name string) (*corev1.PersistentVolumeClaim, bool) {
	c, ok := pl.storage.Claim(namespace, name)
	return pl.assumed.claim(namespace+"/"+name, c, ok)
}

func (pl *VolumeBinding) volume(name string) (*corev1.PersistentVolume, bool) {
	pv, ok := pl.storage.Volume(name)
	return pl.assumed.volume(name, pv, ok)
}

// volumes lists every volume, by name.
func (pl *VolumeBinding) volumes() []*corev1.PersistentVolume {
	all := pl.storage.Volumes()
	out := make([]*corev1.PersistentVolume, len(all))
	for i, pv := range all {
		out[i], _ = pl.assumed.volume(pv.Name, pv, true)
	}
	slices.SortFunc(out, byName)
	return out
}
