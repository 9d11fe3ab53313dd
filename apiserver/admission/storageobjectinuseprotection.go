package admission

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/mkube/mkube/internal/storagepolicy"
)

// StorageObjectInUseProtection puts a finalizer on every new claim and
// volume, so that deleting one in use only marks it Terminating: the
// pvc-protection controller lets a claim go once no pod uses it, the
// pv-protection controller a volume once it is no longer Bound. Data a
// pod is writing cannot vanish under it.
var StorageObjectInUseProtection = Plugin{Name: "StorageObjectInUseProtection", Admit: admitStorageObjectInUseProtection}

func admitStorageObjectInUseProtection(_ context.Context, a *Attributes, _ Objects) error {
	if a.Operation != Create || a.Subresource != "" {
		return nil
	}
	var finalizer string
	switch a.Resource {
	case persistentVolumeClaims:
		finalizer = storagepolicy.ClaimProtectionFinalizer
	case persistentVolumes:
		finalizer = storagepolicy.VolumeProtectionFinalizer
	default:
		return nil
	}
	m, err := meta.Accessor(a.Object)
	if err != nil {
		return err
	}
	if !slices.Contains(m.GetFinalizers(), finalizer) {
		m.SetFinalizers(append(m.GetFinalizers(), finalizer))
	}
	return nil
}
