package storage

import (
	"reflect"
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// VolumeAttributesClasses are to a volume's mutable attributes (IOPS,
// throughput) what StorageClasses are to its provisioning: a claim names
// one in spec.volumeAttributesClassName, and the driver's external
// resizer calls ControllerModifyVolume with the class's parameters, then
// and whenever the claim is moved to another class. GA (v1) since
// Kubernetes v1.34.
var VolumeAttributesClasses = &apiserver.Resource{
	GroupVersion: storagev1.SchemeGroupVersion, Name: "volumeattributesclasses", Kind: "VolumeAttributesClass",
	ShortNames: []string{"vac"},
	New:        func() runtime.Object { return &storagev1.VolumeAttributesClass{} },
	NewList:    func() runtime.Object { return &storagev1.VolumeAttributesClassList{} },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		vac := obj.(*storagev1.VolumeAttributesClass)
		errs := validateVolumeAttributesClass(vac)
		if old == nil {
			return errs
		}
		// ValidateVolumeAttributesClassUpdate: the volumes already
		// modified with a class keep matching it, so neither its driver
		// nor its parameters change; make a new class instead.
		prev := old.(*storagev1.VolumeAttributesClass)
		if vac.DriverName != prev.DriverName {
			errs = append(errs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
		}
		if !reflect.DeepEqual(vac.Parameters, prev.Parameters) {
			errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
		}
		return errs
	},
	// kube-apiserver's VolumeAttributesClass printer.
	Columns: []apiserver.Column{{Name: "DriverName", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		vac := obj.(*storagev1.VolumeAttributesClass)
		return []any{vac.DriverName, apiserver.Age(vac.CreationTimestamp, now)}
	},
}

// Kubernetes' bounds on a class's parameters: 512 of them, 256 kB in all.
const maxParametersSize = 256 << 10

// validateVolumeAttributesClass is Kubernetes' ValidateVolumeAttributesClass
// (the name, a DNS subdomain, is checked with the other metadata): a
// qualified driver name, as a StorageClass's provisioner, and at least
// one parameter, since a class that modifies nothing means nothing.
func validateVolumeAttributesClass(vac *storagev1.VolumeAttributesClass) field.ErrorList {
	var errs field.ErrorList
	driver := field.NewPath("driverName")
	if vac.DriverName == "" {
		errs = append(errs, field.Required(driver, ""))
	} else {
		lower := strings.ToLower(vac.DriverName)
		for _, msg := range validation.IsQualifiedName(lower) {
			errs = append(errs, field.Invalid(driver, lower, msg))
		}
	}
	params := field.NewPath("parameters")
	if len(vac.Parameters) > maxParameters {
		return append(errs, field.TooLong(params, "", maxParameters))
	}
	size := 0
	for k, v := range vac.Parameters {
		if k == "" {
			errs = append(errs, field.Invalid(params, k, "field can not be empty."))
		}
		size += len(k) + len(v)
	}
	if size > maxParametersSize {
		errs = append(errs, field.TooLong(params, "", maxParametersSize))
	}
	if len(vac.Parameters) == 0 {
		errs = append(errs, field.Required(params, "must contain at least one key/value pair"))
	}
	return errs
}
