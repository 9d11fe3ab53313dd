package resource

import (
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// DeviceClasses are what a request names in deviceClassName: selectors
// every device of the class matches (the driver, usually), configuration
// the driver gets for each, and optionally the extended resource a pod
// may ask for in resources.requests instead of a claim.
var DeviceClasses = &apiserver.Resource{
	GroupVersion: resourcev1.SchemeGroupVersion, Name: "deviceclasses", Kind: "DeviceClass",
	New:     func() runtime.Object { return &resourcev1.DeviceClass{} },
	NewList: func() runtime.Object { return &resourcev1.DeviceClassList{} },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		var prev *resourcev1.DeviceClassSpec
		if old != nil {
			prev = &old.(*resourcev1.DeviceClass).Spec
		}
		return validateDeviceClassSpec(&obj.(*resourcev1.DeviceClass).Spec, prev, field.NewPath("spec"))
	},
}

// validateDeviceClassSpec is Kubernetes' validateDeviceClassSpec. The
// selectors are compiled only when they change: an expression stored by
// an older server stays acceptable.
func validateDeviceClassSpec(spec, old *resourcev1.DeviceClassSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if old == nil || !equality.Semantic.DeepEqual(spec.Selectors, old.Selectors) {
		errs = append(errs, validateSelectors(spec.Selectors, path.Child("selectors"))...)
	}
	errs = append(errs, validateList(spec.Config, resourcev1.DeviceConfigMaxSize, func(c resourcev1.DeviceClassConfiguration, p *field.Path) field.ErrorList {
		return validateDeviceConfiguration(c.DeviceConfiguration, p)
	}, path.Child("config"))...)
	if name := spec.ExtendedResourceName; name != nil && !core.IsExtendedResourceName(corev1.ResourceName(*name)) {
		errs = append(errs, field.Invalid(path.Child("extendedResourceName"), *name, "must be a valid extended resource name"))
	}
	return errs
}
