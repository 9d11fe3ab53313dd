package volumeplugin

import (
	"errors"
	"fmt"
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
	// Node is the node the scheduler chose for the claim's first pod
	// (volume.kubernetes.io/selected-node: WaitForFirstConsumer), "" if
	// the claim's class binds at once.
	Node string
}

// ProvisionedNodeDir is where, on a node's disk, the provisioner makes
// the volumes of WaitForFirstConsumer claims.
const ProvisionedNodeDir = "/var/lib/mkube-provisioner"

// CanProvision reports whether this package has the provisioner a
// StorageClass names.
func CanProvision(provisioner string) bool { return provisioner == ProvisionerName }

// Provision is mkube.io/hostpath. For a claim whose class binds at once
// it makes the directory <nfs-root>/mkube-provisioner/<pv name> and
// returns an nfs volume of the server mkube-provisioner: the NFS root is
// seen by every node, so the volume needs no node affinity and follows
// its pod anywhere. For a WaitForFirstConsumer claim, once the scheduler
// has chosen the node of its first pod, it makes the directory on that
// node's disk, <node-root>/<node>/var/lib/mkube-provisioner/<pv name>,
// and returns a hostPath volume pinned there by node affinity
// (kubernetes.io/hostname In [node]): the data stays on that node, and so
// do the pods that use it, as with a local disk. Either is of exactly the
// size asked for, with the class's policy and mount options; the class's
// parameters mean nothing to it. The caller binds the volume to the claim.
func (h Host) Provision(o Options) (*corev1.PersistentVolume, error) {
	claim := o.Claim
	if claim.Spec.Selector != nil {
		return nil, errors.New("claim Selector is not supported")
	}
	if claim.Spec.VolumeMode != nil && *claim.Spec.VolumeMode == corev1.PersistentVolumeBlock {
		return nil, errors.New("mkube.io/hostpath provisions directories, not block devices")
	}
	source, affinity, err := h.provisionDir(o)
	if err != nil {
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
			PersistentVolumeSource:        source,
			NodeAffinity:                  affinity,
		},
	}, nil
}

// provisionDir makes the volume's directory: on the chosen node's disk, or
// under the NFS root.
func (h Host) provisionDir(o Options) (corev1.PersistentVolumeSource, *corev1.VolumeNodeAffinity, error) {
	if o.Node != "" {
		if h.NodeRoot == "" || !isDirName(o.Node) {
			return corev1.PersistentVolumeSource{}, nil, fmt.Errorf("cannot reach the disk of node %q from this controller manager (--node-root)", o.Node)
		}
		p := path.Join(ProvisionedNodeDir, o.PVName)
		if err := os.MkdirAll(filepath.Join(h.NodeRoot, o.Node, filepath.FromSlash(p)), 0o777); err != nil {
			return corev1.PersistentVolumeSource{}, nil, err
		}
		pinned := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{o.Node}}},
		}}}}
		return corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: p}}, pinned, nil
	}
	if h.NFSRoot == "" {
		return corev1.PersistentVolumeSource{}, nil, errors.New("this controller manager has no --nfs-root to create volumes in")
	}
	if err := os.MkdirAll(filepath.Join(h.NFSRoot, ProvisionedServer, o.PVName), 0o777); err != nil {
		return corev1.PersistentVolumeSource{}, nil, err
	}
	return corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: ProvisionedServer, Path: path.Join("/", o.PVName)}}, nil, nil
}
