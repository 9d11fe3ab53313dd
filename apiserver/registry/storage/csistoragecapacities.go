package storage

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// CSIStorageCapacities are what a CSI driver's external provisioner
// publishes of the room it has: for one StorageClass, on the nodes a
// label selector picks (nodeTopology), how much a new volume may take.
// The scheduler's VolumeBinding plugin reads them, for a driver whose
// CSIDriver says storageCapacity, so as not to place a pod where its
// WaitForFirstConsumer claim cannot be provisioned. They live in the
// driver's namespace; mkube's own driver publishes none.
var CSIStorageCapacities = &apiserver.Resource{
	GroupVersion: storagev1.SchemeGroupVersion, Name: "csistoragecapacities", Kind: "CSIStorageCapacity",
	Namespaced: true,
	New:        func() runtime.Object { return &storagev1.CSIStorageCapacity{} },
	NewList:    func() runtime.Object { return &storagev1.CSIStorageCapacityList{} },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		c := obj.(*storagev1.CSIStorageCapacity)
		if old == nil {
			return validateCSIStorageCapacity(c, false)
		}
		prev := old.(*storagev1.CSIStorageCapacity)
		// A selector stored before its label values were checked may be
		// kept (hasInvalidLabelValueInLabelSelector).
		stored := metav1validation.ValidateLabelSelector(prev.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, nil)
		errs := validateCSIStorageCapacity(c, len(stored) > 0)
		// ValidateCSIStorageCapacityUpdate: the topology and class are what
		// the provisioner asked the driver about (GetCapacity), so an
		// object answers for them for good; only the numbers change.
		if !equality.Semantic.DeepEqual(c.NodeTopology, prev.NodeTopology) {
			errs = append(errs, field.Invalid(field.NewPath("nodeTopology"), c.NodeTopology, "field is immutable"))
		}
		if c.StorageClassName != prev.StorageClassName {
			errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, "field is immutable"))
		}
		return errs
	},
	// kube-apiserver's CSIStorageCapacity printer: no Age.
	Columns: []apiserver.Column{{Name: "StorageClassName", Type: "string"}, {Name: "Capacity", Type: "string"}},
	Row: func(obj runtime.Object, _ time.Time) []any {
		c := obj.(*storagev1.CSIStorageCapacity)
		capacity := "<unset>"
		if c.Capacity != nil {
			capacity = c.Capacity.String()
		}
		return []any{c.StorageClassName, capacity}
	},
}

// validateCSIStorageCapacity is Kubernetes' ValidateCSIStorageCapacity
// (the name, a DNS subdomain, is checked with the other metadata): a
// valid label selector, a class's name, and no negative capacity.
// allowInvalidLabelValues relaxes the selector's values, for an update
// of an object stored with such.
func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity, allowInvalidLabelValues bool) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValues}
	errs := metav1validation.ValidateLabelSelector(c.NodeTopology, opts, field.NewPath("nodeTopology"))
	for _, msg := range apivalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	if q := c.Capacity; q != nil && q.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), q.String(), apivalidation.IsNegativeErrorMsg))
	}
	return errs
}
