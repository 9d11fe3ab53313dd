package apiserver

import (
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation follows Kubernetes for the fields mkube uses, with
// apimachinery's own checks for names, labels, annotations, owner
// references and finalizers. Each error names its field path, and the API
// server answers 422 Invalid with one cause per error.

func requiredName() field.ErrorList {
	return field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")}
}

// validateMeta checks metadata every kind shares; names are DNS
// subdomains unless the kind has its own rule.
func validateMeta(obj runtime.Object, res *Resource) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	nameRule := apivalidation.NameIsDNSSubdomain
	if res.NameRule != nil {
		nameRule = res.NameRule
	}
	return apivalidation.ValidateObjectMetaAccessor(m, res.Namespaced, nameRule, field.NewPath("metadata"))
}
