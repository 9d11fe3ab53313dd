package resource

import (
	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// ResourceClaimTemplates are a claim's spec (and labels and annotations)
// that a pod names in spec.resourceClaims[].resourceClaimTemplateName:
// Kubernetes' resourceclaim controller makes each such pod a claim of its
// own from it, owned by the pod. mkube's controller manager does not run
// that controller. A template is fixed once created.
var ResourceClaimTemplates = &apiserver.Resource{
	GroupVersion: resourcev1.SchemeGroupVersion, Name: "resourceclaimtemplates", Kind: "ResourceClaimTemplate", Namespaced: true,
	New:     func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} },
	NewList: func() runtime.Object { return &resourcev1.ResourceClaimTemplateList{} },
	Default: func(obj runtime.Object) { defaultClaimSpec(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		t := obj.(*resourcev1.ResourceClaimTemplate)
		spec := field.NewPath("spec")
		if old != nil {
			return apivalidation.ValidateImmutableField(t.Spec, old.(*resourcev1.ResourceClaimTemplate).Spec, spec)
		}
		// ValidateTemplateObjectMeta: the claims' labels and annotations.
		meta := spec.Child("metadata")
		errs := metav1validation.ValidateLabels(t.Spec.Labels, meta.Child("labels"))
		errs = append(errs, apivalidation.ValidateAnnotations(t.Spec.Annotations, meta.Child("annotations"))...)
		return append(errs, validateClaimSpec(&t.Spec.Spec, spec.Child("spec"))...)
	},
}
