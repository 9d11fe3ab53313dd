package core

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

// PersistentVolumes are pieces of storage of the cluster (seed 003 §五): an
// administrator creates them (static provisioning) or a StorageClass's
// provisioner does for a claim (dynamic provisioning). The PersistentVolume
// controller binds each to at most one claim and moves it through the
// phases Available → Bound → Released (→ Available again after Recycle, or
// gone after Delete), or Failed when reclaiming went wrong.
var PersistentVolumes = &apiserver.Resource{
	GroupVersion: v1, Name: "persistentvolumes", Kind: "PersistentVolume",
	ShortNames:   []string{"pv"},
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &corev1.PersistentVolume{} },
	NewList:      func() runtime.Object { return &corev1.PersistentVolumeList{} },
	PrepareForCreate: func(obj runtime.Object) {
		// A new volume is Pending until the controller has looked at it.
		obj.(*corev1.PersistentVolume).Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending}
	},
	Default: func(obj runtime.Object) { defaultPersistentVolume(obj.(*corev1.PersistentVolume)) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		pv := obj.(*corev1.PersistentVolume)
		if old == nil {
			return ValidatePersistentVolume(pv)
		}
		return ValidatePersistentVolumeUpdate(pv, old.(*corev1.PersistentVolume))
	},
	Columns: persistentVolumeColumns, Row: persistentVolumeRow,
}

// defaultPersistentVolume is Kubernetes' SetDefaults_PersistentVolume: a
// volume keeps its data when its claim goes (Retain) unless it says
// otherwise, and is a filesystem, not a raw block device.
func defaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
}

// The columns of kube-apiserver's PersistentVolume printer.
var persistentVolumeColumns = []apiserver.Column{
	{Name: "Capacity", Type: "string"}, {Name: "Access Modes", Type: "string"}, {Name: "Reclaim Policy", Type: "string"},
	{Name: "Status", Type: "string"}, {Name: "Claim", Type: "string"}, {Name: "StorageClass", Type: "string"},
	{Name: "VolumeAttributesClass", Type: "string"}, {Name: "Reason", Type: "string"}, {Name: "Age", Type: "string"},
	{Name: "VolumeMode", Type: "string", Priority: 1},
}

func persistentVolumeRow(obj runtime.Object, now time.Time) []any {
	pv := obj.(*corev1.PersistentVolume)
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity := pv.Spec.Capacity[corev1.ResourceStorage]
	return []any{capacity.String(), AccessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, storagehelpers.GetPersistentVolumeClass(pv), unsetIfNil(pv.Spec.VolumeAttributesClassName),
		pv.Status.Reason, apiserver.Age(pv.CreationTimestamp, now), unsetIfNil((*string)(pv.Spec.VolumeMode))}
}

// AccessModesString is how kubectl shows access modes: "RWO,ROX", in this
// fixed order whatever the order of the list, each once.
func AccessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

// unsetIfNil is the printers' "<unset>" for an optional field nobody set.
func unsetIfNil(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}
