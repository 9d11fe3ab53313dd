package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

// PersistentVolumeClaims are a user's requests for storage (seed 003 §五):
// a size, access modes and maybe a StorageClass. A claim is Pending until
// the PersistentVolume controller binds it to a volume that satisfies it
// (or has one provisioned), then Bound; Lost if that volume disappears.
// Pods use storage through claims (spec.volumes[].persistentVolumeClaim).
var PersistentVolumeClaims = &apiserver.Resource{
	GroupVersion: v1, Name: "persistentvolumeclaims", Kind: "PersistentVolumeClaim", Namespaced: true,
	ShortNames:   []string{"pvc"},
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
	NewList:      func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*corev1.PersistentVolumeClaim).Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
	},
	// Kubernetes' SetDefaults_PersistentVolumeClaim(Spec).
	Default: func(obj runtime.Object) {
		pvc := obj.(*corev1.PersistentVolumeClaim)
		if pvc.Status.Phase == "" {
			pvc.Status.Phase = corev1.ClaimPending
		}
		if pvc.Spec.VolumeMode == nil {
			pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
		}
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		pvc := obj.(*corev1.PersistentVolumeClaim)
		if old == nil {
			return ValidatePersistentVolumeClaim(pvc)
		}
		return ValidatePersistentVolumeClaimUpdate(pvc, old.(*corev1.PersistentVolumeClaim))
	},
	Columns: persistentVolumeClaimColumns, Row: persistentVolumeClaimRow,
}

// The columns of kube-apiserver's PersistentVolumeClaim printer.
var persistentVolumeClaimColumns = []apiserver.Column{
	{Name: "Status", Type: "string"}, {Name: "Volume", Type: "string"}, {Name: "Capacity", Type: "string"},
	{Name: "Access Modes", Type: "string"}, {Name: "StorageClass", Type: "string"}, {Name: "VolumeAttributesClass", Type: "string"},
	{Name: "Age", Type: "string"}, {Name: "VolumeMode", Type: "string", Priority: 1},
}

// persistentVolumeClaimRow shows the capacity and access modes of the
// volume the claim got (its status), and nothing before it has one.
func persistentVolumeClaimRow(obj runtime.Object, now time.Time) []any {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity, modes = q.String(), AccessModesString(pvc.Status.AccessModes)
	}
	return []any{phase, pvc.Spec.VolumeName, capacity, modes, storagehelpers.GetPersistentVolumeClaimClass(pvc),
		unsetIfNil(pvc.Spec.VolumeAttributesClassName), apiserver.Age(pvc.CreationTimestamp, now),
		unsetIfNil((*string)(pvc.Spec.VolumeMode))}
}
