package persistentvolume

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/client"
)

// bind writes a binding in Kubernetes' order, the volume first: (1) the
// volume's claimRef, (2) the volume Bound, (3) the claim's volumeName and
// bind-completed, (4) the claim Bound, with the volume's capacity and
// access modes. Each step writes only what is missing, so bind finishes
// a half-done binding, and costs nothing on a done one. It stops at the
// first error; the next sync resumes there.
func (b *binder) bind(ctx context.Context, volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	volume, err := b.bindVolumeToClaim(ctx, volume, claim)
	if err != nil {
		return fmt.Errorf("bind volume %s to claim %s: %w", volume.Name, client.KeyOf(claim), err)
	}
	if volume, err = b.updateVolumePhase(ctx, volume, corev1.VolumeBound, ""); err != nil {
		return fmt.Errorf("bind volume %s: status: %w", volume.Name, err)
	}
	if claim, err = b.bindClaimToVolume(ctx, claim, volume); err != nil {
		return fmt.Errorf("bind claim %s to volume %s: %w", client.KeyOf(claim), volume.Name, err)
	}
	if _, err = b.updateClaimStatus(ctx, claim, corev1.ClaimBound, volume); err != nil {
		return fmt.Errorf("bind claim %s: status: %w", client.KeyOf(claim), err)
	}
	return nil
}

// bindVolumeToClaim sets the volume's claimRef (with the claim's UID) and,
// unless a user had reserved the volume for the claim, bound-by-controller.
func (b *binder) bindVolumeToClaim(ctx context.Context, volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolume, error) {
	next, dirty, err := storagehelpers.GetBindVolumeToClaim(volume, claim)
	if err != nil || !dirty {
		return volume, err
	}
	saved, err := b.api.UpdateVolume(ctx, next)
	if err != nil {
		return volume, err
	}
	b.volumes.update(saved)
	b.log.Info("claim bound to volume", "claim", client.KeyOf(claim), "volume", volume.Name)
	return saved, nil
}

// bindClaimToVolume sets the claim's volumeName (bound-by-controller if
// the controller chose the volume) and bind-completed.
func (b *binder) bindClaimToVolume(ctx context.Context, claim *corev1.PersistentVolumeClaim, volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	next, dirty := claim.DeepCopy(), false
	if claim.Spec.VolumeName != volume.Name {
		next.Spec.VolumeName, dirty = volume.Name, true
		if !metav1.HasAnnotation(next.ObjectMeta, storagehelpers.AnnBoundByController) {
			metav1.SetMetaDataAnnotation(&next.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
		}
	}
	if !metav1.HasAnnotation(next.ObjectMeta, storagehelpers.AnnBindCompleted) {
		metav1.SetMetaDataAnnotation(&next.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
		dirty = true
	}
	if !dirty {
		return claim, nil
	}
	saved, err := b.api.UpdateClaim(ctx, next)
	if err != nil {
		return claim, err
	}
	b.claims.update(saved)
	b.log.Info("volume bound to claim", "claim", client.KeyOf(claim), "volume", volume.Name)
	return saved, nil
}

// unbindVolume takes back a binding: all of it if the controller made it
// (the volume is free again), only the claim's UID if a user reserved the
// volume for that claim by name. The volume is Available again.
func (b *binder) unbindVolume(ctx context.Context, volume *corev1.PersistentVolume) error {
	next := volume.DeepCopy()
	if metav1.HasAnnotation(volume.ObjectMeta, storagehelpers.AnnBoundByController) {
		next.Spec.ClaimRef = nil
		delete(next.Annotations, storagehelpers.AnnBoundByController)
		if len(next.Annotations) == 0 {
			next.Annotations = nil
		}
	} else {
		next.Spec.ClaimRef.UID = ""
	}
	saved, err := b.api.UpdateVolume(ctx, next)
	if err != nil {
		return fmt.Errorf("unbind volume %s: %w", volume.Name, err)
	}
	b.volumes.update(saved)
	_, err = b.updateVolumePhase(ctx, saved, corev1.VolumeAvailable, "")
	return err
}

// updateClaimStatus sets the claim's phase and, with a volume, the
// volume's access modes and (when it becomes Bound, not after, so that a
// resize can tell the two apart) its capacity; without one, neither.
func (b *binder) updateClaimStatus(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase,
	volume *corev1.PersistentVolume) (*corev1.PersistentVolumeClaim, error) {
	next := claim.DeepCopy()
	next.Status.Phase = phase
	if volume == nil {
		next.Status.AccessModes, next.Status.Capacity = nil, nil
	} else {
		next.Status.AccessModes = volume.Spec.AccessModes
		if claim.Status.Phase != phase {
			size, ok := volume.Spec.Capacity[corev1.ResourceStorage]
			if !ok {
				return nil, fmt.Errorf("PersistentVolume %q is without a storage capacity", volume.Name)
			}
			next.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: size}
		}
	}
	if equality.Semantic.DeepEqual(next.Status, claim.Status) {
		return claim, nil
	}
	saved, err := b.api.UpdateClaimStatus(ctx, next)
	if err != nil {
		return nil, err
	}
	b.claims.update(saved)
	if claim.Status.Phase != phase {
		b.log.Info("claim entered phase", "claim", client.KeyOf(claim), "phase", phase)
	}
	return saved, nil
}

// updateClaimStatusWithEvent is updateClaimStatus plus a Warning event,
// both only when the phase changes, not on every sync.
func (b *binder) updateClaimStatusWithEvent(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase,
	volume *corev1.PersistentVolume, reason, message string) (*corev1.PersistentVolumeClaim, error) {
	if claim.Status.Phase == phase {
		return claim, nil
	}
	saved, err := b.updateClaimStatus(ctx, claim, phase, volume)
	if err == nil {
		b.event(saved, corev1.EventTypeWarning, reason, message)
	}
	return saved, err
}

// updateVolumePhase sets the volume's phase and message. It also stamps
// lastPhaseTransitionTime, which kube-apiserver's status strategy stamps;
// mkube's kinds have no clock of their own, the controller has.
func (b *binder) updateVolumePhase(ctx context.Context, volume *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, message string) (*corev1.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	next := volume.DeepCopy()
	now := metav1.NewTime(b.clock.Now())
	next.Status.Phase, next.Status.Message, next.Status.LastPhaseTransitionTime = phase, message, &now
	saved, err := b.api.UpdateVolumeStatus(ctx, next)
	if err != nil {
		return volume, err
	}
	b.volumes.update(saved)
	b.log.Info("volume entered phase", "volume", volume.Name, "phase", phase)
	return saved, nil
}

// updateVolumePhaseWithEvent is updateVolumePhase plus a Warning event,
// both only when the phase changes.
func (b *binder) updateVolumePhaseWithEvent(ctx context.Context, volume *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, reason, message string) (*corev1.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	saved, err := b.updateVolumePhase(ctx, volume, phase, message)
	if err == nil {
		b.event(saved, corev1.EventTypeWarning, reason, message)
	}
	return saved, err
}
