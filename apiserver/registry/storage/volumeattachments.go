package storage

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

// VolumeAttachments ask a CSI driver's external attacher to attach one
// volume to one node, and hold its answer: Kubernetes' attach/detach
// controller makes one for each volume of a driver with attachRequired
// (CSIDriver) that a scheduled pod uses, the attacher sets
// status.attached, and the kubelet waits for it before mounting. mkube's
// own driver needs no attaching, so only clients make them here.
var VolumeAttachments = &apiserver.Resource{
	GroupVersion: storagev1.SchemeGroupVersion, Name: "volumeattachments", Kind: "VolumeAttachment",
	// The attacher writes volumeattachments/status; the main PUT keeps
	// the stored one, and a status write changes only .status.
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &storagev1.VolumeAttachment{} },
	NewList:      func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*storagev1.VolumeAttachment).Status = storagev1.VolumeAttachmentStatus{}
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		va := obj.(*storagev1.VolumeAttachment)
		errs := validateVolumeAttachment(va)
		if old != nil {
			// ValidateVolumeAttachmentUpdate: which volume goes to which
			// node never changes; a new attachment is a new object.
			errs = append(errs, apivalidation.ValidateImmutableField(va.Spec, old.(*storagev1.VolumeAttachment).Spec, field.NewPath("spec"))...)
		}
		return errs
	},
	// kube-apiserver's VolumeAttachment printer.
	Columns: []apiserver.Column{{Name: "Attacher", Type: "string"}, {Name: "PV", Type: "string"},
		{Name: "Node", Type: "string"}, {Name: "Attached", Type: "boolean"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		va := obj.(*storagev1.VolumeAttachment)
		return []any{va.Spec.Attacher, ptr.Deref(va.Spec.Source.PersistentVolumeName, ""), va.Spec.NodeName,
			va.Status.Attached, apiserver.Age(va.CreationTimestamp, now)}
	},
}

// validateVolumeAttachment is Kubernetes' ValidateVolumeAttachment (the
// name, a DNS subdomain, is checked with the other metadata): a valid
// driver name as the attacher, exactly one volume source and a node's
// name. Kubernetes also bounds what the attacher writes in the status
// (256 kB of attachmentMetadata, error messages of 1024 bytes, codes not
// negative); mkube's status subresource does not run Validate, so those
// are not checked here.
func validateVolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	spec := field.NewPath("spec")
	errs := ValidateCSIDriverName(va.Spec.Attacher, spec.Child("attacher"))
	errs = append(errs, validateVolumeAttachmentSource(&va.Spec.Source, spec.Child("source"))...)
	for _, msg := range apivalidation.NameIsDNSSubdomain(va.Spec.NodeName, false) {
		errs = append(errs, field.Invalid(spec.Child("nodeName"), va.Spec.NodeName, msg))
	}
	if name := va.Spec.Source.PersistentVolumeName; name != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*name, false) {
			errs = append(errs, field.Invalid(spec.Child("source", "persistentVolumeName"), *name, msg))
		}
	}
	return errs
}

const exactlyOneSource = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"

// validateVolumeAttachmentSource: a PersistentVolume by name, or the spec
// of a pod's inline volume that the CSI migration turned into one.
func validateVolumeAttachmentSource(src *storagev1.VolumeAttachmentSource, path *field.Path) field.ErrorList {
	switch {
	case src.InlineVolumeSpec == nil && src.PersistentVolumeName == nil:
		return field.ErrorList{field.Required(path, exactlyOneSource)}
	case src.InlineVolumeSpec != nil && src.PersistentVolumeName != nil:
		return field.ErrorList{field.Forbidden(path, exactlyOneSource)}
	case src.PersistentVolumeName != nil && *src.PersistentVolumeName == "":
		return field.ErrorList{field.Required(path.Child("persistentVolumeName"), "must specify non empty persistentVolumeName")}
	case src.InlineVolumeSpec != nil:
		return validateInlineVolumeSpec(src.InlineVolumeSpec, path.Child("inlineVolumeSpec"))
	}
	return nil
}

var inlineAccessModes = sets.New(corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)

// validateInlineVolumeSpec is the part of Kubernetes' ValidatePersistentVolumeSpec
// for inline volumes (validateInlinePersistentVolumeSpec): a CSI volume
// with access modes, no claim, no capacity, and kept (Retain) if a
// policy is given. Kubernetes then checks the CSI source in depth; mkube
// checks its driver and volume handle only.
func validateInlineVolumeSpec(spec *corev1.PersistentVolumeSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	const inline = "in the context of inline volumes"
	if spec.ClaimRef != nil {
		errs = append(errs, field.Forbidden(path.Child("claimRef"), "may not be specified "+inline))
	}
	if len(spec.Capacity) != 0 {
		errs = append(errs, field.Forbidden(path.Child("capacity"), "may not be specified "+inline))
	}
	if csi := spec.CSI; csi == nil {
		errs = append(errs, field.Required(path.Child("csi"), "has to be specified "+inline))
	} else {
		errs = append(errs, ValidateCSIDriverName(csi.Driver, path.Child("csi", "driver"))...)
		if csi.VolumeHandle == "" {
			errs = append(errs, field.Required(path.Child("csi", "volumeHandle"), ""))
		}
	}
	if len(spec.AccessModes) == 0 {
		errs = append(errs, field.Required(path.Child("accessModes"), ""))
	}
	for _, m := range spec.AccessModes {
		if !inlineAccessModes.Has(m) {
			errs = append(errs, field.NotSupported(path.Child("accessModes"), m, sets.List(inlineAccessModes)))
		}
	}
	if p := spec.PersistentVolumeReclaimPolicy; p != "" && p != corev1.PersistentVolumeReclaimRetain {
		errs = append(errs, field.Forbidden(path.Child("persistentVolumeReclaimPolicy"), fmt.Sprintf("may only be %s %s", corev1.PersistentVolumeReclaimRetain, inline)))
	}
	return errs
}
