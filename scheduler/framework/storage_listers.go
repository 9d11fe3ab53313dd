package framework

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// StorageLister reads PersistentVolumeClaims, PersistentVolumes and
// StorageClasses as the scheduler's informers hold them: what the volume
// plugins (VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
// VolumeZone) check a pod's claims against. The objects are the
// informers': never modify them.
type StorageLister interface {
	Claim(namespace, name string) (*corev1.PersistentVolumeClaim, bool)
	Volume(name string) (*corev1.PersistentVolume, bool)
	// Volumes returns every PersistentVolume.
	Volumes() []*corev1.PersistentVolume
	Class(name string) (*storagev1.StorageClass, bool)
}

// CSINodeLister reads the CSINodes the kubelets write, one per node and
// named after it, as the scheduler's informer holds them: the volume
// limits NodeVolumeLimits counts against (Kubernetes' CSIManager). The
// objects are the informer's: never modify them.
type CSINodeLister interface {
	CSINode(name string) (*storagev1.CSINode, bool)
}

// StorageWriter writes what VolumeBinding decided for a pod before it is
// bound (its PreBind): a static volume's claimRef, a claim's selected node.
// It returns what the API server stored.
type StorageWriter interface {
	UpdateVolume(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error)
	UpdateClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error)
}

// StorageOrNone is h.Storage, or, if that is nil, a lister in which no
// claim, volume or class exists.
func (h Handle) StorageOrNone() StorageLister {
	if h.Storage == nil {
		return noStorage{}
	}
	return h.Storage
}

type noStorage struct{}

func (noStorage) Claim(string, string) (*corev1.PersistentVolumeClaim, bool) { return nil, false }
func (noStorage) Volume(string) (*corev1.PersistentVolume, bool)             { return nil, false }
func (noStorage) Volumes() []*corev1.PersistentVolume                        { return nil }
func (noStorage) Class(string) (*storagev1.StorageClass, bool)               { return nil, false }

// CSINodesOrNone is h.CSINodes, or, if that is nil, a lister in which no
// node has a CSINode: no node then limits its volumes.
func (h Handle) CSINodesOrNone() CSINodeLister {
	if h.CSINodes == nil {
		return noStorage{}
	}
	return h.CSINodes
}

func (noStorage) CSINode(string) (*storagev1.CSINode, bool) { return nil, false }
