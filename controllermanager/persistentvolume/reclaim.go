package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/controllermanager/persistentvolume/volumeplugin"
)

// reclaimVolume is seed 003 §五's Recycling, by the volume's policy:
// Retain keeps it Released, with its data, for an administrator to look
// at, empty and make Available by hand (removing its claimRef); Delete
// removes its storage and the volume; Recycle scrubs it and makes it
// Available. Kubernetes runs Delete and Recycle in goroutines with a
// back-off; mkube's single worker runs them in place, which is simpler
// and quick on directories, and retries a failed one at each sync (every
// SyncPeriod), the volume Failed meanwhile.
func (b *binder) reclaimVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	switch volume.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimRetain:
		return nil
	case corev1.PersistentVolumeReclaimRecycle:
		return b.recycleVolume(ctx, volume)
	case corev1.PersistentVolumeReclaimDelete:
		return b.deleteVolume(ctx, volume)
	}
	_, err := b.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, ReasonVolumeUnknownReclaimPolicy, "Volume has unrecognized PersistentVolumeReclaimPolicy")
	return err
}

// recycleVolume scrubs a released volume and makes it Available. Kubernetes
// runs a recycler pod (busybox, `rm -rf /scrub/*`) on the volume and
// relays its events as RecyclerPod; mkube's controller manager reaches
// the data itself (--node-root, --nfs-root) and scrubs it directly, and
// says so in a RecyclerPod event. The Recycle policy is deprecated in
// Kubernetes in favour of dynamic provisioning; it is here because the
// seed teaches it.
func (b *binder) recycleVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	volume, released, err := b.stillReleased(ctx, volume)
	if err != nil || !released {
		return err
	}
	// A pod still running with the old claim would see its files vanish.
	if _, cached := b.claims.get(claimKey(volume.Spec.ClaimRef)); !cached {
		if users := b.activePodsUsing(claimKey(volume.Spec.ClaimRef)); len(users) > 0 {
			b.event(volume, corev1.EventTypeNormal, ReasonVolumeFailedRecycle, "Volume is used by pods: "+strings.Join(users, ","))
			return nil
		}
	}
	if err := b.host.Recycle(volume); errors.Is(err, volumeplugin.ErrNoRecycler) {
		_, err = b.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, ReasonVolumeFailedRecycle, "No recycler plugin found for the volume!")
		return err
	} else if err != nil {
		_, err = b.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, ReasonVolumeFailedRecycle, fmt.Sprintf("Recycle failed: %s", err))
		return err
	}
	b.event(volume, corev1.EventTypeNormal, ReasonRecyclerPod, "Recycler pod: the controller manager scrubbed the volume's data itself (mkube runs no recycler pod)")
	b.event(volume, corev1.EventTypeNormal, ReasonVolumeRecycled, "Volume recycled")
	b.log.Info("volume recycled", "volume", volume.Name)
	return b.unbindVolume(ctx, volume)
}

// deleteVolume deletes a released volume's storage, then the volume. A
// volume whose storage nobody here can delete (a static nfs volume) is
// Failed, with Kubernetes' words; one of an external CSI driver is left
// to that driver.
func (b *binder) deleteVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	volume, released, err := b.stillReleased(ctx, volume)
	if err != nil || !released {
		return err
	}
	if volume.DeletionTimestamp != nil && metav1.HasAnnotation(volume.ObjectMeta, storagehelpers.AnnDynamicallyProvisioned) &&
		!slices.Contains(volume.Finalizers, inTreeDeleteFinalizer) {
		return nil // deleted already: the volume object waits for its other finalizers
	}
	plugin, del, err := b.host.Deleter(volume, volume.Annotations[storagehelpers.AnnDynamicallyProvisioned])
	if err != nil {
		err = fmt.Errorf("error getting deleter volume plugin for volume %q: %w", volume.Name, err)
	} else if del == nil {
		b.log.Info("volume is an external deleter's to delete", "volume", volume.Name)
		return nil
	} else {
		err = del()
	}
	if err != nil {
		b.log.Warn("could not delete the volume's storage, will retry", "volume", volume.Name, "err", err)
		_, err = b.updateVolumePhaseWithEvent(ctx, volume, corev1.VolumeFailed, ReasonVolumeFailedDelete, err.Error())
		return err
	}
	b.log.Info("volume's storage deleted", "volume", volume.Name, "plugin", plugin)
	if i := slices.Index(volume.Finalizers, inTreeDeleteFinalizer); i >= 0 {
		next := volume.DeepCopy()
		next.Finalizers = slices.Delete(next.Finalizers, i, i+1)
		if volume, err = b.api.UpdateVolume(ctx, next); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return fmt.Errorf("remove %s from volume %s: %w", inTreeDeleteFinalizer, next.Name, err)
		}
		b.volumes.update(volume)
	}
	if err := b.api.DeleteVolume(ctx, volume.Name); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete volume %s: %w", volume.Name, err)
	}
	return nil
}

// stillReleased re-reads the volume from the API server, as Kubernetes
// does before an operation that destroys data, and reports whether it
// still needs reclaiming: bound to a claim that is gone, or that is bound
// to another volume.
func (b *binder) stillReleased(ctx context.Context, volume *corev1.PersistentVolume) (*corev1.PersistentVolume, bool, error) {
	fresh, err := b.api.GetVolume(ctx, volume.Name)
	if apierrors.IsNotFound(err) {
		return volume, false, nil
	}
	if err != nil {
		return volume, false, err
	}
	b.volumes.update(fresh)
	ref := fresh.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		return fresh, false, nil
	}
	claim, ok := b.claims.get(claimKey(ref))
	if ok && claim.UID == ref.UID && (claim.Spec.VolumeName == "" || claim.Spec.VolumeName == fresh.Name) {
		return fresh, false, nil
	}
	return fresh, true, nil
}
