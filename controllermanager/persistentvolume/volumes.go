package persistentvolume

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// syncVolume decides a volume's phase from its claim: Available with
// none (or one reserved for it that has not come), Bound with its claim,
// Released once that claim is gone — and then reclaims it by its policy.
// Errors returned are retried; nothing was saved.
func (b *binder) syncVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	ref := volume.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		// Unused, or pre-bound by its creator to a claim the claim's sync
		// will bind: either way, free for that.
		_, err := b.updateVolumePhase(ctx, volume, corev1.VolumeAvailable, "")
		return err
	}
	claim, err := b.claimOf(ctx, volume)
	if err != nil {
		return err
	}
	switch {
	case claim == nil:
		// Seed 003 §五, Releasing: the claim was deleted; the data is still
		// there. A Failed volume stays Failed (the user sees what went
		// wrong) while reclaiming is retried.
		if volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
			b.log.Info("volume released, its reclaim policy applies", "volume", volume.Name, "policy", volume.Spec.PersistentVolumeReclaimPolicy)
			if volume, err = b.updateVolumePhase(ctx, volume, corev1.VolumeReleased, ""); err != nil {
				return err
			}
		}
		return b.reclaimVolume(ctx, volume)
	case claim.Spec.VolumeName == "":
		// The claim's half of the binding is not done (a provisioned
		// volume, or a volume pre-bound to it): its sync does it.
		if storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &volume.Spec) {
			b.event(volume, corev1.EventTypeWarning, ReasonVolumeMismatch,
				fmt.Sprintf("Cannot bind PersistentVolume to requested PersistentVolumeClaim %q due to incompatible volumeMode.", claim.Name))
			b.event(claim, corev1.EventTypeWarning, ReasonVolumeMismatch,
				fmt.Sprintf("Cannot bind PersistentVolume %q to requested PersistentVolumeClaim due to incompatible volumeMode.", volume.Name))
			return nil
		}
		b.enqueue(item{claimItem, claimKey(ref)})
		return nil
	case claim.Spec.VolumeName == volume.Name:
		_, err := b.updateVolumePhase(ctx, volume, corev1.VolumeBound, "")
		return err
	case metav1.HasAnnotation(volume.ObjectMeta, storagehelpers.AnnDynamicallyProvisioned) &&
		volume.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete:
		// Provisioned for a claim that got another volume meanwhile: not
		// needed, deleted.
		if volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed {
			if volume, err = b.updateVolumePhase(ctx, volume, corev1.VolumeReleased, ""); err != nil {
				return err
			}
		}
		return b.reclaimVolume(ctx, volume)
	}
	// The claim is bound to another volume. If the controller bound this
	// one (two binds raced), it undoes its binding; if a user pre-bound
	// it, it stays reserved for that claim, only the UID goes.
	return b.unbindVolume(ctx, volume)
}

// claimOf is the live claim a volume's claimRef points to, or nil if it
// is gone: deleted, or deleted and created again (another UID). Before
// releasing a volume on the word of the store, which may lag behind a
// claim that was just created (by a provisioner, the scheduler), the API
// server is asked: releasing a volume wrongly could cost its data.
func (b *binder) claimOf(ctx context.Context, volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	ref := volume.Spec.ClaimRef
	claim, found := b.claims.get(claimKey(ref))
	ask := !found && volume.Status.Phase != corev1.VolumeReleased && volume.Status.Phase != corev1.VolumeFailed
	if found && claim.UID != ref.UID {
		ask = true // maybe the store's copy is the older claim of that name
	}
	if ask {
		live, err := b.api.GetClaim(ctx, ref.Namespace, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			claim = nil
		case err != nil:
			return nil, err
		default:
			claim = live
		}
	}
	if claim != nil && claim.UID != ref.UID {
		return nil, nil
	}
	return claim, nil
}
