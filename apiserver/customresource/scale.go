package customresource

import (
	"fmt"
	"math"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// scaleSubresource is .../scale of a version with subresources.scale:
// an autoscaling/v1 Scale whose spec.replicas is at specReplicasPath,
// status.replicas at statusReplicasPath and status.selector (a
// serialized label selector, a string) at labelSelectorPath, as
// apiextensions-apiserver's ScaleREST. `kubectl scale` and the HPA use it.
func scaleSubresource(def *apiextensionsv1.CustomResourceSubresourceScale) apiserver.Subresource {
	return apiserver.ScaleSubresourceOf(apiserver.Scaler{
		SpecReplicasPath: def.SpecReplicasPath,
		Read: func(obj runtime.Object) (*autoscalingv1.Scale, bool, error) {
			return scaleOf(obj.(*unstructured.Unstructured), def)
		},
		Write: func(obj runtime.Object, replicas int32) error {
			return unstructured.SetNestedField(obj.(*unstructured.Unstructured).Object, int64(replicas), splitPath(def.SpecReplicasPath)...)
		},
	})
}

// scaleOf is a custom resource's Scale; found is false when it has no
// spec replicas. A field of the wrong type is an error (in
// unstructured's words: ".spec.replicas accessor error: ...").
func scaleOf(u *unstructured.Unstructured, def *apiextensionsv1.CustomResourceSubresourceScale) (*autoscalingv1.Scale, bool, error) {
	specReplicas, found, err := unstructured.NestedInt64(u.Object, splitPath(def.SpecReplicasPath)...)
	if err != nil {
		return nil, false, err
	}
	statusReplicas, _, err := unstructured.NestedInt64(u.Object, splitPath(def.StatusReplicasPath)...)
	if err != nil {
		return nil, false, err
	}
	scale := apiserver.NewScale(u)
	scale.Spec.Replicas = int32(specReplicas)
	scale.Status.Replicas = int32(statusReplicas)
	if def.LabelSelectorPath != nil && *def.LabelSelectorPath != "" {
		if scale.Status.Selector, _, err = unstructured.NestedString(u.Object, splitPath(*def.LabelSelectorPath)...); err != nil {
			return nil, false, err
		}
	}
	return scale, found, nil
}

// validateScale checks, on every write of the object, that what the
// scale paths hold can be a Scale's: integers within int32 (not
// negative) and a string selector, in apiextensions-apiserver's words.
// The paths themselves are the fields' names in the errors.
func validateScale(u *unstructured.Unstructured, def *apiextensionsv1.CustomResourceSubresourceScale) field.ErrorList {
	errs := validateReplicas(u, def.SpecReplicasPath)
	errs = append(errs, validateReplicas(u, def.StatusReplicasPath)...)
	if def.LabelSelectorPath != nil && *def.LabelSelectorPath != "" {
		if selector, _, err := unstructured.NestedString(u.Object, splitPath(*def.LabelSelectorPath)...); err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*def.LabelSelectorPath), selector, err.Error()))
		}
	}
	return errs
}

func validateReplicas(u *unstructured.Unstructured, path string) field.ErrorList {
	replicas, _, err := unstructured.NestedInt64(u.Object, splitPath(path)...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, err.Error())}
	case replicas < 0:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, "should be a non-negative integer")}
	case replicas > math.MaxInt32:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

// splitPath is a scale path's field names: ".spec.replicas" is spec,
// replicas (the definition's paths are JSON paths of fields only).
func splitPath(path string) []string {
	return strings.Split(strings.TrimPrefix(path, "."), ".")
}
