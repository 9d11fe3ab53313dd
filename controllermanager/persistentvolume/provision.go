package persistentvolume

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/reference"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/persistentvolume/volumeplugin"
)

// provisionClaim is seed 003 §五's dynamic provisioning: no volume fits
// a claim of a class, so the class's provisioner makes one. mkube.io/
// hostpath runs here; any other name outside kubernetes.io/ is an
// external provisioner's (a CSI driver's), which the claim is left to.
// Failures are events on the claim and retried at the next sync.
func (b *binder) provisionClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	class, err := b.class(storagehelpers.GetPersistentVolumeClaimClass(claim))
	if err != nil {
		b.event(claim, corev1.EventTypeWarning, ReasonProvisioningFailed, err.Error())
		return nil
	}
	switch {
	case volumeplugin.CanProvision(class.Provisioner):
		return b.provision(ctx, claim, class)
	case strings.HasPrefix(class.Provisioner, "kubernetes.io/"):
		// An in-tree plugin mkube does not have, or kubernetes.io/no-provisioner.
		b.event(claim, corev1.EventTypeWarning, ReasonProvisioningFailed, "no volume plugin matched name: "+class.Provisioner)
		return nil
	}
	claim, err = b.setClaimProvisioner(ctx, claim, class.Provisioner)
	if err != nil {
		b.event(claim, corev1.EventTypeWarning, ReasonProvisioningFailed, fmt.Sprintf("Error saving claim: %v", err))
		return err
	}
	b.event(claim, corev1.EventTypeNormal, ReasonExternalProvisioning, fmt.Sprintf("Waiting for a volume to be created either by the external provisioner '%s' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that "+
		"the provisioner is running and correctly registered.", class.Provisioner))
	return nil
}

// provision makes the volume pvc-<claim uid> for the claim, pre-bound to
// it: the claim's next sync binds the two (FindMatchingVolume prefers a
// volume pre-bound to the claim over any other).
func (b *binder) provision(ctx context.Context, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) error {
	claim, err := b.setClaimProvisioner(ctx, claim, class.Provisioner)
	if err != nil {
		return err
	}
	// The name is the claim's: a volume made before a crash is found again.
	name := "pvc-" + string(claim.UID)
	if _, ok := b.volumes.get(name); ok {
		return nil
	}
	if _, err := b.api.GetVolume(ctx, name); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	claimRef, err := reference.GetReference(scheme.Scheme, claim)
	if err != nil {
		return err
	}
	node, ok := claim.Annotations[storagehelpers.AnnSelectedNode]
	if ok {
		// The volume is made on that node's disk and pinned to it.
		if _, found := b.nodes.Get(node); !found {
			b.event(claim, corev1.EventTypeWarning, ReasonProvisioningFailed,
				fmt.Sprintf("Failed to get target node: %v", apierrors.NewNotFound(corev1.Resource("node"), node)))
			return nil
		}
	}
	volume, err := b.host.Provision(volumeplugin.Options{PVName: name, Claim: claim, ReclaimPolicy: *class.ReclaimPolicy,
		MountOptions: class.MountOptions, Node: node})
	if err != nil {
		b.rescheduleProvisioning(ctx, claim)
		b.event(claim, corev1.EventTypeWarning, ReasonProvisioningFailed, fmt.Sprintf("Failed to provision volume with StorageClass %q: %v", class.Name, err))
		return nil
	}
	volume.Spec.ClaimRef = claimRef
	volume.Spec.StorageClassName = class.Name
	metav1.SetMetaDataAnnotation(&volume.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
	metav1.SetMetaDataAnnotation(&volume.ObjectMeta, storagehelpers.AnnDynamicallyProvisioned, class.Provisioner)
	if volume.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
		volume.Finalizers = []string{inTreeDeleteFinalizer}
	}
	saved, err := b.api.CreateVolume(ctx, volume)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		b.event(claim, corev1.EventTypeWarning, ReasonProvisioningFailed,
			fmt.Sprintf("Error creating provisioned PV object for claim %s: %v. Deleting the volume.", client.KeyOf(claim), err))
		if _, del, _ := b.host.Deleter(volume, class.Provisioner); del != nil {
			if derr := del(); derr != nil {
				b.event(claim, corev1.EventTypeWarning, ReasonProvisioningCleanupFailed,
					fmt.Sprintf("Error cleaning provisioned volume for claim %s: %v. Please delete manually.", client.KeyOf(claim), derr))
			}
		}
		return err
	}
	if err == nil {
		b.volumes.update(saved)
	}
	b.log.Info("volume provisioned for claim", "claim", client.KeyOf(claim), "volume", name, "class", class.Name)
	b.event(claim, corev1.EventTypeNormal, ReasonProvisioningSucceeded, fmt.Sprintf("Successfully provisioned volume %s using %s", name, class.Provisioner))
	b.enqueue(item{claimItem, client.KeyOf(claim)})
	return nil
}

// setClaimProvisioner records on the claim who provisions it
// (volume.kubernetes.io/storage-provisioner, and its beta name), which is
// how an external provisioner knows the claim is its own.
func (b *binder) setClaimProvisioner(ctx context.Context, claim *corev1.PersistentVolumeClaim, provisioner string) (*corev1.PersistentVolumeClaim, error) {
	if claim.Annotations[storagehelpers.AnnStorageProvisioner] == provisioner {
		return claim, nil
	}
	next := claim.DeepCopy()
	metav1.SetMetaDataAnnotation(&next.ObjectMeta, storagehelpers.AnnBetaStorageProvisioner, provisioner)
	metav1.SetMetaDataAnnotation(&next.ObjectMeta, storagehelpers.AnnStorageProvisioner, provisioner)
	saved, err := b.api.UpdateClaim(ctx, next)
	if err != nil {
		return claim, err
	}
	b.claims.update(saved)
	return saved, nil
}

// rescheduleProvisioning hands a WaitForFirstConsumer claim back to the
// scheduler after provisioning on its node failed: without the
// selected-node annotation, it picks a node again.
func (b *binder) rescheduleProvisioning(ctx context.Context, claim *corev1.PersistentVolumeClaim) {
	if _, ok := claim.Annotations[storagehelpers.AnnSelectedNode]; !ok {
		return
	}
	next := claim.DeepCopy()
	delete(next.Annotations, storagehelpers.AnnSelectedNode)
	if saved, err := b.api.UpdateClaim(ctx, next); err == nil {
		b.claims.update(saved)
	} else {
		b.log.Info("could not hand the claim back to the scheduler", "claim", client.KeyOf(claim), "err", err)
	}
}
