// Package storagepolicy holds the storage rules that both the API server
// and the controller manager apply (seed 003 §五): which StorageClass is
// the default one, which the DefaultStorageClass admission plugin gives a
// new claim and the PersistentVolume controller gives an older claim
// still without a class; and the finalizers that keep a claim or a volume
// in use from going away, which the StorageObjectInUseProtection plugin
// adds and the protection controllers remove.
package storagepolicy

import (
	storagev1 "k8s.io/api/storage/v1"

	"github.com/mkube/mkube/internal/defaultclass"
)

const (
	// IsDefaultClassAnnotation set to "true" marks the default class.
	IsDefaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"
	// BetaIsDefaultClassAnnotation is its older name, still honoured.
	BetaIsDefaultClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"

	// ClaimProtectionFinalizer keeps a claim that a pod uses.
	ClaimProtectionFinalizer = "kubernetes.io/pvc-protection"
	// VolumeProtectionFinalizer keeps a volume that is bound to a claim.
	VolumeProtectionFinalizer = "kubernetes.io/pv-protection"
)

// IsDefaultClass reports whether sc is marked as the default class.
func IsDefaultClass(sc *storagev1.StorageClass) bool {
	return sc.Annotations[IsDefaultClassAnnotation] == "true" || sc.Annotations[BetaIsDefaultClassAnnotation] == "true"
}

// DefaultClass is the class a claim that names none gets, or nil: among
// the classes marked default, the newest, and of those created at the
// same instant the first by name (Kubernetes' GetDefaultClass, which
// tolerates two defaults while an administrator switches from one to the
// other).
func DefaultClass(classes []*storagev1.StorageClass) *storagev1.StorageClass {
	return defaultclass.Newest(classes, IsDefaultClass)
}
