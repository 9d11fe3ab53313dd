package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/internal/storagepolicy"
)

// DefaultStorageClass gives a new claim that names no StorageClass the
// cluster's default one (seed 003 §五, dynamic provisioning: "the PVC must
// request a class"), so that users need not know the class's name. A
// claim that asks for "" on purpose keeps it: it wants a static volume.
var DefaultStorageClass = Plugin{Name: "DefaultStorageClass", Admit: admitDefaultStorageClass}

var (
	persistentVolumeClaims = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	persistentVolumes      = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	storageClasses         = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}
)

func admitDefaultStorageClass(ctx context.Context, a *Attributes, objs Objects) error {
	if a.Operation != Create || a.Resource != persistentVolumeClaims || a.Subresource != "" {
		return nil
	}
	pvc := a.Object.(*corev1.PersistentVolumeClaim)
	if storagehelpers.PersistentVolumeClaimHasClass(pvc) {
		return nil
	}
	classes, err := listStorageClasses(ctx, objs)
	if err != nil {
		return apierrors.NewForbidden(persistentVolumeClaims.GroupResource(), pvc.Name, err)
	}
	if def := storagepolicy.DefaultClass(classes); def != nil {
		pvc.Spec.StorageClassName = &def.Name
	}
	return nil
}

func listStorageClasses(ctx context.Context, objs Objects) ([]*storagev1.StorageClass, error) {
	list, err := objs.List(ctx, storageClasses, "")
	if err != nil {
		return nil, err
	}
	out := make([]*storagev1.StorageClass, len(list))
	for i, o := range list {
		out[i] = o.(*storagev1.StorageClass)
	}
	return out, nil
}
