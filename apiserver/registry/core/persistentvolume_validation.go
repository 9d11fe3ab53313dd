package core

import (
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules of Kubernetes' ValidatePersistentVolume and
// ValidatePersistentVolumeClaim (pkg/apis/core/validation), with their
// messages. Of the volume sources, hostPath, local, nfs and csi, which
// mkube can reach, are checked in depth; the others Kubernetes has are
// accepted as they are, as long as a volume has exactly one.

var (
	accessModes     = sets.New(corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)
	reclaimPolicies = sets.New(corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimRetain)
	volumeModes     = sets.New(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
	hostPathTypes   = sets.New(corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
		corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev)
)

// ValidatePersistentVolume checks a volume's spec.
func ValidatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	spec, p := &pv.Spec, field.NewPath("spec")
	errs := validateAccessModes(spec.AccessModes, p.Child("accessModes"), "")
	errs = append(errs, validateCapacity(spec.Capacity, p.Child("capacity"))...)
	if policy := spec.PersistentVolumeReclaimPolicy; policy != "" && !reclaimPolicies.Has(policy) {
		errs = append(errs, field.NotSupported(p.Child("persistentVolumeReclaimPolicy"), policy, sets.List(reclaimPolicies)))
	}
	if na := spec.NodeAffinity; na != nil && na.Required == nil {
		errs = append(errs, field.Required(p.Child("nodeAffinity", "required"), "must specify required node constraints"))
	} else if na != nil {
		errs = append(errs, ValidateNodeSelector(na.Required, p.Child("nodeAffinity", "required"))...)
	}
	errs = append(errs, validateVolumeSource(spec, p)...)
	if spec.HostPath != nil && path.Clean(spec.HostPath.Path) == "/" && spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	errs = append(errs, validateClassName(spec.StorageClassName, p.Child("storageClassName"))...)
	if spec.VolumeMode != nil && !volumeModes.Has(*spec.VolumeMode) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *spec.VolumeMode, sets.List(volumeModes)))
	}
	if vac := spec.VolumeAttributesClassName; vac != nil {
		if *vac == "" {
			errs = append(errs, field.Required(p.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		}
		errs = append(errs, validateClassName(*vac, p.Child("volumeAttributesClassName"))...)
		if spec.CSI == nil {
			errs = append(errs, field.Required(p.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return errs
}

// ValidatePersistentVolumeUpdate: a volume's source, mode and node
// affinity are fixed at creation; the rest (capacity, claimRef, policy,
// class) may change.
func ValidatePersistentVolumeUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	errs := ValidatePersistentVolume(pv)
	if !equality.Semantic.DeepEqual(pv.Spec.PersistentVolumeSource, old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
			"spec.persistentvolumesource is immutable after creation\n"+diff.Diff(old.Spec.PersistentVolumeSource, pv.Spec.PersistentVolumeSource)))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil && !equality.Semantic.DeepEqual(pv.Spec.NodeAffinity, old.Spec.NodeAffinity) {
		errs = append(errs, field.Invalid(field.NewPath("nodeAffinity"), pv.Spec.NodeAffinity, "field is immutable, except for updating from beta label to GA"))
	}
	return errs
}

// validateVolumeSource: exactly one source, checked where mkube uses it.
func validateVolumeSource(spec *corev1.PersistentVolumeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	src := reflect.ValueOf(spec.PersistentVolumeSource)
	found := 0
	for i := range src.NumField() {
		if src.Field(i).IsNil() {
			continue
		}
		name, _, _ := strings.Cut(src.Type().Field(i).Tag.Get("json"), ",")
		if found++; found > 1 {
			errs = append(errs, field.Forbidden(p.Child(name), "may not specify more than 1 volume type"))
			continue
		}
		sp := p.Child(name)
		switch s := spec.PersistentVolumeSource; {
		case s.HostPath != nil:
			errs = append(errs, validateLocalPath(s.HostPath.Path, sp.Child("path"))...)
			if t := s.HostPath.Type; t != nil && !hostPathTypes.Has(*t) {
				errs = append(errs, field.NotSupported(sp.Child("type"), *t, sets.List(hostPathTypes)))
			}
		case s.Local != nil:
			errs = append(errs, validateLocalPath(s.Local.Path, sp.Child("path"))...)
			if spec.NodeAffinity == nil {
				errs = append(errs, field.Required(p.Child("nodeAffinity"), "Local volume requires node affinity"))
			}
		case s.NFS != nil:
			errs = append(errs, validateNFS(s.NFS, sp)...)
		case s.CSI != nil:
			errs = append(errs, ValidateCSIDriverName(s.CSI.Driver, sp.Child("driver"))...)
			if s.CSI.VolumeHandle == "" {
				errs = append(errs, field.Required(sp.Child("volumeHandle"), ""))
			}
		}
	}
	if found == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

// validateLocalPath: a path on the node, not climbing out of where it says.
func validateLocalPath(p string, fp *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fp, "")}
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		return field.ErrorList{field.Invalid(fp, p, "must not contain '..'")}
	}
	return nil
}

func validateNFS(n *corev1.NFSVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n.Server == "" {
		errs = append(errs, field.Required(p.Child("server"), ""))
	}
	if n.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	if !path.IsAbs(n.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), n.Path, "must be an absolute path"))
	}
	return errs
}

// ValidateCSIDriverName is Kubernetes' ValidateCSIDriverName: a DNS
// subdomain of at most 63 characters, whatever its case.
func ValidateCSIDriverName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		errs = append(errs, field.TooLong(p, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// validateAccessModes: known modes, ReadWriteOncePod alone. required is
// the message when there are none ("" for a volume, which says nothing).
func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, p *field.Path, required string) field.ErrorList {
	var errs field.ErrorList
	if len(modes) == 0 {
		errs = append(errs, field.Required(p, required))
	}
	oncePod, others := false, false
	for _, m := range modes {
		switch {
		case !accessModes.Has(m):
			errs = append(errs, field.NotSupported(p, m, sets.List(accessModes)))
		case m == corev1.ReadWriteOncePod:
			oncePod = true
		default:
			others = true
		}
	}
	if oncePod && others {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// validateCapacity: a volume has a size, in storage only, above zero.
func validateCapacity(c corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(c) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	if _, ok := c[corev1.ResourceStorage]; !ok || len(c) > 1 {
		errs = append(errs, field.NotSupported(p, c, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for _, name := range slices.Sorted(maps.Keys(c)) {
		errs = append(errs, validatePositive(c[name], p.Key(string(name)))...)
	}
	return errs
}

// validatePositive is Kubernetes' ValidatePositiveQuantityValue.
func validatePositive(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Cmp(resource.Quantity{}) <= 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be greater than zero")}
	}
	return nil
}

func validateClassName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		return nil
	}
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// ValidatePersistentVolumeClaim checks a claim's spec.
func ValidatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	spec, p := &pvc.Spec, field.NewPath("spec")
	errs := validateAccessModes(spec.AccessModes, p.Child("accessModes"), "at least 1 access mode is required")
	if spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	storage := p.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(storage, ""))
	} else {
		errs = append(errs, validatePositive(q, storage)...)
	}
	if spec.StorageClassName != nil {
		errs = append(errs, validateClassName(*spec.StorageClassName, p.Child("storageClassName"))...)
	}
	if spec.VolumeMode != nil && !volumeModes.Has(*spec.VolumeMode) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *spec.VolumeMode, sets.List(volumeModes)))
	}
	if spec.VolumeAttributesClassName != nil {
		errs = append(errs, validateClassName(*spec.VolumeAttributesClassName, p.Child("volumeAttributesClassName"))...)
	}
	return errs
}

// ValidatePersistentVolumeClaimUpdate is Kubernetes' rule that a claim is
// immutable once created, so that quota and limits cannot be gamed, except:
// the controller sets volumeName once; a claim without a class may get one
// (the default class, assigned afterwards); a bound claim may ask for more
// storage (or less, down to above what it has: recovering from a failed
// expansion) and change its volumeAttributesClassName.
func ValidatePersistentVolumeClaimUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := ValidatePersistentVolumeClaim(pvc)
	next, prev := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if prev.VolumeName == "" {
		prev.VolumeName = next.VolumeName
	}
	if prev.StorageClassName == nil && next.StorageClassName != nil {
		prev.StorageClassName = next.StorageClassName
	}
	if pvc.Status.Phase == corev1.ClaimBound {
		if next.Resources.Requests != nil {
			next.Resources.Requests[corev1.ResourceStorage] = old.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		next.VolumeAttributesClassName = prev.VolumeAttributesClassName
	}
	if !equality.Semantic.DeepEqual(next, prev) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"),
			fmt.Sprintf("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n%v", diff.Diff(prev, next))))
	}
	oldSize, newSize := old.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if statusSize := old.Status.Capacity[corev1.ResourceStorage]; newSize.Cmp(oldSize) < 0 && newSize.Cmp(statusSize) <= 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(pvc.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	return errs
}
