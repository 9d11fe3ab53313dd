package nodevolumelimits

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/storage/ephemeral"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/internal/csitranslation"
	"github.com/mkube/mkube/scheduler/framework"
)

// volumeID is one volume of one driver, what Kubernetes' getVolumeUniqueName
// joins into "driver/handle". Kubernetes gives a claim not bound yet a
// handle with a random prefix, so that it cannot be taken for a real
// volume's; here unbound keeps the two apart.
type volumeID struct {
	driver string
	// handle is the CSI volumeHandle, the PersistentVolume's name for a
	// volume of mkube's provisioner, or namespace/name for a claim not
	// bound yet (unbound).
	handle  string
	unbound bool
}

// hasClaims: only a claim, or a generic ephemeral volume (a claim the
// pod owns), can be a CSI driver's volume.
func hasClaims(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}

// addVolumes adds the volumes of pod that belong to a driver to into
// (Kubernetes' filterAttachableVolumes). A claim that does not exist
// rejects the pod being scheduled (isNew), which cannot run without it;
// for a pod already on the node it is not counted, as nothing says it
// is still that pod's.
func (pl *NodeVolumeLimits) addVolumes(pod *corev1.Pod, isNew bool, into sets.Set[volumeID]) *framework.Status {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		var name string
		switch {
		case v.PersistentVolumeClaim != nil:
			name = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			name = ephemeral.VolumeClaimName(pod, v) // <pod>-<volume>
		default:
			continue // an inline volume: no CSI driver's in mkube
		}
		if name == "" {
			return framework.AsStatus(errors.New("PersistentVolumeClaim had no name"))
		}
		claim, ok := pl.storage.Claim(pod.Namespace, name)
		if !ok {
			if !isNew {
				continue
			}
			notFound := apierrors.NewNotFound(corev1.Resource("persistentvolumeclaim"), name)
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("looking up PVC %s/%s: %v", pod.Namespace, name, notFound))
		}
		if v.Ephemeral != nil {
			// An ephemeral volume's claim must be the pod's own.
			if err := ephemeral.VolumeIsForPod(pod, claim); err != nil {
				return framework.AsStatus(err)
			}
		}
		if id, ok := pl.volumeOf(claim); ok {
			into.Insert(id)
		}
	}
	return nil
}

// volumeOf is the driver and handle of a claim's volume (Kubernetes'
// getCSIDriverInfo): a CSI volume's own, the driver mkube's provisioner
// stands for for the volumes it made, or, for a claim not bound yet or
// bound to a volume not in the cache (deleted, or not created yet), its
// class's provisioner. ok is false for a volume of no driver.
func (pl *NodeVolumeLimits) volumeOf(claim *corev1.PersistentVolumeClaim) (volumeID, bool) {
	if claim.Spec.VolumeName == "" {
		return pl.volumeOfClass(claim)
	}
	pv, ok := pl.storage.Volume(claim.Spec.VolumeName)
	if !ok {
		return pl.volumeOfClass(claim)
	}
	switch {
	case pv.Spec.CSI != nil:
		return volumeID{driver: pv.Spec.CSI.Driver, handle: pv.Spec.CSI.VolumeHandle}, pv.Spec.CSI.Driver != "" && pv.Spec.CSI.VolumeHandle != ""
	case pv.Annotations[storagehelpers.AnnDynamicallyProvisioned] == csitranslation.HostPathProvisioner:
		return volumeID{driver: csitranslation.HostPathDriver, handle: pv.Name}, true
	}
	return volumeID{}, false // a static hostPath or nfs volume, say
}

// volumeOfClass counts a claim under its class's provisioner (Kubernetes'
// getCSIDriverInfoFromSC). A claim without a class, or whose class is
// gone, counts for none: it must be bound to a volume before the pod can
// run, so it is not counted until it is.
func (pl *NodeVolumeLimits) volumeOfClass(claim *corev1.PersistentVolumeClaim) (volumeID, bool) {
	name := storagehelpers.GetPersistentVolumeClaimClass(claim)
	if name == "" {
		return volumeID{}, false
	}
	class, ok := pl.storage.Class(name)
	if !ok {
		return volumeID{}, false
	}
	return volumeID{driver: csitranslation.DriverOf(class.Provisioner), handle: claim.Namespace + "/" + claim.Name, unbound: true}, true
}
