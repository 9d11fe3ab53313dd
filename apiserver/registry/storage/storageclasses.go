// Package storage declares storage.k8s.io/v1: StorageClasses, the kinds of
// storage a cluster offers for dynamic provisioning (seed 003 §五), and
// the kinds of the CSI drivers behind them: CSINodes, what each node's
// kubelet says about the drivers that attach volumes to it (csinodes.go),
// CSIDrivers, how Kubernetes is to treat a driver's volumes
// (csidrivers.go), VolumeAttachments, a volume's attaching to a node
// (volumeattachments.go), CSIStorageCapacities, the room a driver has
// (csistoragecapacities.go), and VolumeAttributesClasses, the mutable
// attributes a claim may ask for (volumeattributesclasses.go).
// StorageClasses, with their validation, are in storageclasses.go.
package storage

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/internal/storagepolicy"
)

// IsDefaultClassAnnotation marks the class a claim that names none gets.
const IsDefaultClassAnnotation = storagepolicy.IsDefaultClassAnnotation

// StorageClasses name a provisioner and its parameters; a claim that names
// a class gets a volume the class's provisioner creates.
var StorageClasses = &apiserver.Resource{
	GroupVersion: storagev1.SchemeGroupVersion, Name: "storageclasses", Kind: "StorageClass",
	ShortNames: []string{"sc"},
	New:        func() runtime.Object { return &storagev1.StorageClass{} },
	NewList:    func() runtime.Object { return &storagev1.StorageClassList{} },
	Default: func(obj runtime.Object) {
		sc := obj.(*storagev1.StorageClass)
		if sc.ReclaimPolicy == nil {
			sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimDelete)
		}
		if sc.VolumeBindingMode == nil {
			sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
		}
	},
	Validate: validateStorageClass,
	NameCell: func(obj runtime.Object) string {
		sc := obj.(*storagev1.StorageClass)
		if storagepolicy.IsDefaultClass(sc) {
			return sc.Name + " (default)" // as kubectl prints the default class
		}
		return sc.Name
	},
	Columns: []apiserver.Column{{Name: "Provisioner", Type: "string"}, {Name: "ReclaimPolicy", Type: "string"},
		{Name: "VolumeBindingMode", Type: "string"}, {Name: "AllowVolumeExpansion", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		sc := obj.(*storagev1.StorageClass)
		return []any{sc.Provisioner, string(ptr.Deref(sc.ReclaimPolicy, "")), string(ptr.Deref(sc.VolumeBindingMode, "")),
			strconv.FormatBool(ptr.Deref(sc.AllowVolumeExpansion, false)), apiserver.Age(sc.CreationTimestamp, now)}
	},
	Bootstrap: []runtime.Object{standardClass},
}

// HostPathProvisioner is mkube's own provisioner, run by the controller
// manager's PersistentVolume controller as kube-controller-manager runs
// its in-tree ones: it makes a directory that pods on any node reach.
const HostPathProvisioner = "mkube.io/hostpath"

// standardClass is the default class every cluster starts with, as kind
// and minikube start with one: a claim that names no class gets a volume
// provisioned at once (Immediate) and deleted with the claim (Delete).
// Delete it, or take its annotation off, to see claims wait for a
// static volume instead.
var standardClass = &storagev1.StorageClass{
	ObjectMeta:        metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{IsDefaultClassAnnotation: "true"}},
	Provisioner:       HostPathProvisioner,
	ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
	VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
}

var (
	reclaimPolicies = sets.New(corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain)
	bindingModes    = sets.New(storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer)
)

// maxParameters is Kubernetes' limit on a class's parameters.
const maxParameters = 512

// validateStorageClass follows Kubernetes' ValidateStorageClass and
// ValidateStorageClassUpdate: a qualified provisioner name, known policies,
// and, once created, nothing that provisioned volumes depend on changes.
func validateStorageClass(obj, old runtime.Object) field.ErrorList {
	sc := obj.(*storagev1.StorageClass)
	var errs field.ErrorList
	provisioner := field.NewPath("provisioner")
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(provisioner, ""))
	}
	for _, msg := range validation.IsQualifiedName(sc.Provisioner) {
		if sc.Provisioner != "" {
			errs = append(errs, field.Invalid(provisioner, sc.Provisioner, msg))
		}
	}
	if len(sc.Parameters) > maxParameters {
		errs = append(errs, field.TooMany(field.NewPath("parameters"), len(sc.Parameters), maxParameters))
	}
	for k := range sc.Parameters {
		if k == "" {
			errs = append(errs, field.Invalid(field.NewPath("parameters"), sc.Parameters, "key cannot be empty"))
		}
	}
	if p := ptr.Deref(sc.ReclaimPolicy, ""); !reclaimPolicies.Has(p) {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), p, sets.List(reclaimPolicies)))
	}
	if m := ptr.Deref(sc.VolumeBindingMode, ""); !bindingModes.Has(m) {
		errs = append(errs, field.NotSupported(field.NewPath("volumeBindingMode"), m, sets.List(bindingModes)))
	}
	if old == nil {
		return errs
	}
	prev := old.(*storagev1.StorageClass)
	if !equality.Semantic.DeepEqual(prev.Parameters, sc.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if prev.Provisioner != sc.Provisioner {
		errs = append(errs, field.Forbidden(provisioner, "updates to provisioner are forbidden."))
	}
	if ptr.Deref(prev.ReclaimPolicy, "") != ptr.Deref(sc.ReclaimPolicy, "") {
		errs = append(errs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	if ptr.Deref(prev.VolumeBindingMode, "") != ptr.Deref(sc.VolumeBindingMode, "") {
		errs = append(errs, field.Invalid(field.NewPath("volumeBindingMode"), ptr.Deref(sc.VolumeBindingMode, ""), "field is immutable"))
	}
	return errs
}
