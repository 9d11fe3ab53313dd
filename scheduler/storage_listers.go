package scheduler

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/scheduler/framework"
)

// storageLister is framework.StorageLister over the informers of claims,
// volumes and classes, and framework.CSINodeLister over that of CSINodes,
// whose handlers also retry the pods waiting on them (eventhandlers.go).
type storageLister struct{ claims, volumes, classes, csiNodes *client.Informer }

var (
	_ framework.StorageLister = storageLister{}
	_ framework.CSINodeLister = storageLister{}
)

func newStorageLister(f *client.SharedInformers) storageLister {
	return storageLister{claims: f.For(client.PersistentVolumeClaims), volumes: f.For(client.PersistentVolumes),
		classes: f.For(client.StorageClasses), csiNodes: f.For(client.CSINodes)}
}

func (l storageLister) Claim(namespace, name string) (*corev1.PersistentVolumeClaim, bool) {
	obj, ok := l.claims.Cache().Get(namespace + "/" + name)
	if !ok {
		return nil, false
	}
	return obj.(*corev1.PersistentVolumeClaim), true
}

func (l storageLister) Volume(name string) (*corev1.PersistentVolume, bool) {
	obj, ok := l.volumes.Cache().Get(name)
	if !ok {
		return nil, false
	}
	return obj.(*corev1.PersistentVolume), true
}

func (l storageLister) Volumes() []*corev1.PersistentVolume {
	objs := l.volumes.Cache().List()
	out := make([]*corev1.PersistentVolume, len(objs))
	for i, obj := range objs {
		out[i] = obj.(*corev1.PersistentVolume)
	}
	return out
}

func (l storageLister) Class(name string) (*storagev1.StorageClass, bool) {
	obj, ok := l.classes.Cache().Get(name)
	if !ok {
		return nil, false
	}
	return obj.(*storagev1.StorageClass), true
}

func (l storageLister) CSINode(name string) (*storagev1.CSINode, bool) {
	obj, ok := l.csiNodes.Cache().Get(name)
	if !ok {
		return nil, false
	}
	return obj.(*storagev1.CSINode), true
}

// storageWriter is framework.StorageWriter: PUTs of volumes and claims,
// as kube-scheduler's volume binder updates them.
type storageWriter struct{ client *client.Client }

func (w storageWriter) UpdateVolume(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	out := &corev1.PersistentVolume{}
	return out, w.client.Update(ctx, client.PersistentVolumes, "", pv.Name, pv, out)
}

func (w storageWriter) UpdateClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	out := &corev1.PersistentVolumeClaim{}
	return out, w.client.Update(ctx, client.PersistentVolumeClaims, pvc.Namespace, pvc.Name, pvc, out)
}
