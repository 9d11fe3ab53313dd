package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/storagepolicy"
)

// syncClaim decides what a claim needs: a volume, until its binding is
// complete (bind-completed); after that, that its volume is still there
// and still its own.
func (b *binder) syncClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if !metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBindCompleted) {
		return b.syncUnboundClaim(ctx, claim)
	}
	return b.syncBoundClaim(ctx, claim)
}

// syncUnboundClaim is seed 003 §五's Binding: the claim gets the best
// volume there is (index.go), or else one provisioned for it by its
// class, or else waits, Pending, saying why. Every error returned is
// retried: nothing was saved, the next sync finds the same state.
func (b *binder) syncUnboundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName != "" {
		return b.syncPreboundClaim(ctx, claim)
	}
	delay, err := storagehelpers.IsDelayBindingMode(claim, classLister{b})
	if err != nil {
		return err
	}
	volume, err := findBestMatch(claim, b.volumes.list(), delay)
	if err != nil {
		return fmt.Errorf("error finding PV for claim %q: %w", client.KeyOf(claim), err)
	}
	if volume != nil {
		return b.bind(ctx, volume, claim)
	}
	// No volume fits. A claim created before there was a default class
	// gets it now (Kubernetes' retroactive default StorageClass); its
	// update brings it back here.
	if assigned, err := b.assignDefaultClass(ctx, claim); err != nil || assigned {
		return err
	}
	switch {
	case delay && !storagehelpers.IsDelayBindingProvisioning(claim):
		// WaitForFirstConsumer: the scheduler picks the node with the
		// claim's first pod and says so in volume.kubernetes.io/selected-node.
		b.eventForDelayedClaim(claim)
	case storagehelpers.GetPersistentVolumeClaimClass(claim) != "":
		return b.provisionClaim(ctx, claim)
	default:
		b.event(claim, corev1.EventTypeNormal, ReasonFailedBinding, "no persistent volumes available for this claim and no storage class is set")
	}
	_, err = b.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
	return err
}

// syncPreboundClaim: the user named the volume (spec.volumeName). It binds
// to that one or none, once it exists and fits.
func (b *binder) syncPreboundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	volume, ok := b.volumes.get(claim.Spec.VolumeName)
	var err error
	switch {
	case !ok: // not there (yet): wait for it
		_, err = b.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
	case volume.Spec.ClaimRef == nil:
		if mismatch := volumeSatisfiesClaim(volume, claim); mismatch != nil {
			b.event(claim, corev1.EventTypeWarning, ReasonVolumeMismatch, fmt.Sprintf("Cannot bind to requested volume %q: %s", volume.Name, mismatch))
			_, err = b.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil)
		} else {
			err = b.bind(ctx, volume, claim)
		}
	case storagehelpers.IsVolumeBoundToClaim(volume, claim): // pre-bound both ways, or half done
		err = b.bind(ctx, volume, claim)
	default:
		b.event(claim, corev1.EventTypeWarning, ReasonFailedBinding, fmt.Sprintf("volume %q already bound to a different claim.", volume.Name))
		if metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBoundByController) {
			// Only a user removing bind-completed leads here.
			return fmt.Errorf("invalid binding of claim %q to volume %q: volume already claimed by %q",
				client.KeyOf(claim), volume.Name, claimKey(volume.Spec.ClaimRef))
		}
		_, err = b.updateClaimStatus(ctx, claim, corev1.ClaimPending, nil) // the user's choice: wait for the volume
	}
	return err
}

// syncBoundClaim watches a bound claim: it is Lost if its volume went, or
// went to another claim (Lost is for good: the data is elsewhere or
// gone); otherwise bind() completes whatever half of the binding a crash
// left undone, and does nothing when all is done.
func (b *binder) syncBoundClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		_, err := b.updateClaimStatusWithEvent(ctx, claim, corev1.ClaimLost, nil, ReasonClaimLost,
			"Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
		return err
	}
	volume, ok := b.volumes.get(claim.Spec.VolumeName)
	switch {
	case !ok:
		_, err := b.updateClaimStatusWithEvent(ctx, claim, corev1.ClaimLost, nil, ReasonClaimLost,
			"Bound claim has lost its PersistentVolume. Data on the volume is lost!")
		return err
	case volume.Spec.ClaimRef == nil, volume.Spec.ClaimRef.UID == claim.UID:
		return b.bind(ctx, volume, claim)
	}
	_, err := b.updateClaimStatusWithEvent(ctx, claim, corev1.ClaimLost, nil, ReasonClaimMisbound,
		"Two claims are bound to the same volume, this one is bound incorrectly")
	return err
}

// volumeSatisfiesClaim says why a volume the claim names does not fit it.
func volumeSatisfiesClaim(volume *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	requested, size := claim.Spec.Resources.Requests[corev1.ResourceStorage], volume.Spec.Capacity[corev1.ResourceStorage]
	switch {
	case volume.DeletionTimestamp != nil:
		return fmt.Errorf("the volume is marked for deletion %q", volume.Name)
	case size.Value() < requested.Value():
		return errors.New("requested PV is too small")
	case storagehelpers.GetPersistentVolumeClass(volume) != storagehelpers.GetPersistentVolumeClaimClass(claim):
		return errors.New("storageClassName does not match")
	case storagehelpers.CheckVolumeModeMismatches(&claim.Spec, &volume.Spec):
		return errors.New("incompatible volumeMode")
	case !storagehelpers.CheckAccessModes(claim, volume):
		return errors.New("incompatible accessMode")
	}
	return nil
}

// eventForDelayedClaim says what a WaitForFirstConsumer claim waits for:
// a pod to use it, or, once there is one, the scheduler to place it.
func (b *binder) eventForDelayedClaim(claim *corev1.PersistentVolumeClaim) {
	var unscheduled []string
	for _, pod := range b.podsUsing(client.KeyOf(claim)) {
		if pod.Spec.NodeName == "" {
			unscheduled = append(unscheduled, pod.Name)
		}
	}
	switch len(unscheduled) {
	case 0:
		b.event(claim, corev1.EventTypeNormal, ReasonWaitForFirstConsumer, "waiting for first consumer to be created before binding")
	case 1:
		b.event(claim, corev1.EventTypeNormal, ReasonWaitForPodScheduled, fmt.Sprintf("waiting for pod %s to be scheduled", unscheduled[0]))
	default:
		b.event(claim, corev1.EventTypeNormal, ReasonWaitForPodScheduled, fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(unscheduled, ",")))
	}
}

// assignDefaultClass gives a claim with no class at all the default
// class, if there is one now, and reports whether it did.
func (b *binder) assignDefaultClass(ctx context.Context, claim *corev1.PersistentVolumeClaim) (bool, error) {
	if storagehelpers.PersistentVolumeClaimHasClass(claim) {
		return false, nil
	}
	var classes []*storagev1.StorageClass
	for _, obj := range b.classes.List() {
		classes = append(classes, obj.(*storagev1.StorageClass))
	}
	def := storagepolicy.DefaultClass(classes)
	if def == nil {
		return false, nil
	}
	next := claim.DeepCopy()
	next.Spec.StorageClassName = &def.Name
	saved, err := b.api.UpdateClaim(ctx, next)
	if err != nil {
		return false, fmt.Errorf("can't update PersistentVolumeClaim[%q]: %w", client.KeyOf(claim), err)
	}
	b.claims.update(saved)
	b.log.Info("assigned the default StorageClass to a claim", "claim", client.KeyOf(claim), "class", def.Name)
	b.enqueue(item{claimItem, client.KeyOf(claim)})
	return true, nil
}
