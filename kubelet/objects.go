package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/kubelet/envvars"
)

// The ConfigMaps and Secrets that containers see, as env or as volumes,
// come from the fleet's informers: a real kubelet keeps a watch on each
// object its pods use (the Watch change-detection strategy) rather than
// read it at every use. An object the cache has not got (created an
// instant before the pod) is read from the API server, so a pod applied
// right after its ConfigMap does not wait for the watch. A kubelet on its
// node's own certificate has no such informers (it may not list these
// kinds, identity.go): it reads each object its pods use, when they use
// it, as the Node authorizer allows.

// configMap is the ConfigMap ns/name; a NotFound error is worded as the
// kubelet words it, `configmap "x" not found`.
func (k *Kubelet) configMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	if k.fleet.configMaps != nil {
		if obj, ok := k.fleet.configMaps.Cache().Get(ns + "/" + name); ok {
			return obj.(*corev1.ConfigMap), nil
		}
	}
	cm := &corev1.ConfigMap{}
	return cm, envvars.NotFound("configmap", name, k.client.Get(ctx, client.ConfigMaps, ns, name, cm))
}

// secret is the Secret ns/name, as configMap.
func (k *Kubelet) secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	if k.fleet.secrets != nil {
		if obj, ok := k.fleet.secrets.Cache().Get(ns + "/" + name); ok {
			return obj.(*corev1.Secret), nil
		}
	}
	s := &corev1.Secret{}
	return s, envvars.NotFound("secret", name, k.client.Get(ctx, client.Secrets, ns, name, s))
}

// watchObjects notes every change of a ConfigMap or Secret, for the
// next volume resync to bring to the pods that mount it. A kubelet
// without the informers (identity.go) cannot tell what changed.
func (f *Fleet) watchObjects() {
	if f.configMaps == nil {
		return
	}
	note := func(kind string) client.Handler {
		changed := func(obj runtime.Object) {
			f.changedMu.Lock()
			defer f.changedMu.Unlock()
			f.changed[kind+"/"+client.KeyOf(obj)] = true
		}
		return client.Handler{OnAdd: changed, OnUpdate: func(_, obj runtime.Object) { changed(obj) }}
	}
	f.configMaps.AddHandler(note("configmap"))
	f.secrets.AddHandler(note("secret"))
}

// everyObject stands, in takeChanged's answer, for all of them.
const everyObject = "*"

// takeChanged returns the objects changed since it was last called; for a
// kubelet that reads each object (identity.go), every object, so that
// each resync reads again what its pods mount: Kubernetes' Get
// change-detection strategy.
func (f *Fleet) takeChanged() map[string]bool {
	if f.configMaps == nil {
		return map[string]bool{everyObject: true}
	}
	f.changedMu.Lock()
	defer f.changedMu.Unlock()
	out := f.changed
	f.changed = map[string]bool{}
	return out
}

// mountsChanged: the pod has a volume made from one of the changed
// objects ("configmap/ns/name", "secret/ns/name").
func mountsChanged(pod *corev1.Pod, changed map[string]bool) bool {
	ref := func(kind, name string) bool { return changed[everyObject] || changed[kind+"/"+pod.Namespace+"/"+name] }
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.ConfigMap != nil && ref("configmap", v.ConfigMap.Name),
			v.Secret != nil && ref("secret", v.Secret.SecretName):
			return true
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil && ref("configmap", src.ConfigMap.Name) || src.Secret != nil && ref("secret", src.Secret.Name) {
					return true
				}
			}
		}
	}
	return false
}
