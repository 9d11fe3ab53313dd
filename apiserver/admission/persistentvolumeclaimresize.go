package admission

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// PersistentVolumeClaimResize lets a bound claim ask for more storage
// only if its StorageClass says its volumes can grow
// (allowVolumeExpansion), which the class's provisioner then does. A
// claim that is not bound yet cannot change its size at all: validation
// says so, as in Kubernetes, where that check comes first.
var PersistentVolumeClaimResize = Plugin{Name: "PersistentVolumeClaimResize", Admit: admitPersistentVolumeClaimResize}

func admitPersistentVolumeClaimResize(ctx context.Context, a *Attributes, objs Objects) error {
	if a.Operation != Update || a.Resource != persistentVolumeClaims || a.Subresource != "" {
		return nil
	}
	pvc, old := a.Object.(*corev1.PersistentVolumeClaim), a.OldObject.(*corev1.PersistentVolumeClaim)
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) <= 0 || old.Status.Phase != corev1.ClaimBound {
		return nil
	}
	class := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	allowed := false
	if class != "" && class == storagehelpers.GetPersistentVolumeClaimClass(old) {
		if obj, err := objs.Get(ctx, storageClasses, "", class); err == nil {
			sc := obj.(*storagev1.StorageClass)
			allowed = sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
		}
	}
	if !allowed {
		return apierrors.NewForbidden(persistentVolumeClaims.GroupResource(), pvc.Name,
			errors.New("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"))
	}
	return nil
}
