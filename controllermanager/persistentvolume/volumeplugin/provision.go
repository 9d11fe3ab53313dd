package volumeplugin

import (
	"errors"
	"os"
	"path"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Options are what the controller asks a provisioner for, from the claim
// and its StorageClass (Kubernetes' VolumeOptions).
type Options struct {
	PVName        string // pvc-<claim uid>
	Claim         *corev1.PersistentVolumeClaim
	ReclaimPolicy corev1.PersistentVolumeReclaimPolicy
	MountOptions  []string
}

// CanProvision reports whether this package has the provisioner a
// StorageClass names.
func CanProvision(provisioner string) bool { return provisioner == ProvisionerName }

// Provision is mkube.io/hostpath: it makes the directory
// <nfs-root>/mkube-provisioner/<pv name> and returns the volume standing
// for it, an nfs volume of the server mkube-provisioner, of exactly the
// size asked for, with the class's policy and mount options. The data
// lives under the NFS root, which every node sees, so the volume needs no
// node affinity: it follows its pod anywhere. The class's parameters
// mean nothing to it. The caller binds the volume to the claim.
func (h Host) Provision(o Options) (*corev1.PersistentVolume, error) {
	claim := o.Claim
	if claim.Spec.Selector != nil {
		return nil, errors.New("claim Selector is not supported")
	}
	if claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock {
		return nil, errors.New("mkube.io/hostpath provisions directories, not block devices")
	}
	if h.NFSRoot == "" {
		return nil, errors.New("this controller manager has no --nfs-root to create volumes in")
	}
	if err := os.MkdirAll(filepath.Join(h.NFSRoot, ProvisionedServer, o.PVName), 0o777); err != nil {
		return nil, err
	}
	return &corev1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: o.PVName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: o.ReclaimPolicy,
			MountOptions:                  o.MountOptions,
			VolumeMode:                    claim.Spec.VolumeMode,
			PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{
				Server: ProvisionedServer, Path: path.Join("/", o.PVName)}},
		},
	}, nil
}
