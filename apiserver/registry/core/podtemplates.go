package core

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
)

// PodTemplates are pod templates stored on their own: nothing in the
// cluster acts on them, they are kept for tools that stamp pods out of a
// named template. The template is checked as a workload's is, without the
// workloads' rule that pods always restart.
var PodTemplates = &apiserver.Resource{
	GroupVersion: v1, Name: "podtemplates", Kind: "PodTemplate", Namespaced: true,
	New:     func() runtime.Object { return &corev1.PodTemplate{} },
	NewList: func() runtime.Object { return &corev1.PodTemplateList{} },
	// Kubernetes' podtemplate strategy: a new template is generation 1 (a
	// PodTemplate has no .spec, so the server's own count would leave 0).
	PrepareForCreate: func(obj runtime.Object) { obj.(*corev1.PodTemplate).Generation = 1 },
	Default:          func(obj runtime.Object) { DefaultPodSpec(&obj.(*corev1.PodTemplate).Template.Spec) },
	Admit:            bumpTemplateGeneration,
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		return ValidatePodTemplateSpec(&obj.(*corev1.PodTemplate).Template, field.NewPath("template"))
	},
	// As kube-apiserver's printer: no Age, the pod labels last.
	Columns: []apiserver.Column{{Name: "Containers", Type: "string"}, {Name: "Images", Type: "string"},
		{Name: "Pod Labels", Type: "string"}},
	Row: func(obj runtime.Object, _ time.Time) []any {
		pt := obj.(*corev1.PodTemplate)
		names, images := ContainersAndImages(&pt.Template.Spec)
		return []any{names, images, labels.FormatLabels(pt.Template.Labels)}
	},
}

// bumpTemplateGeneration is the podtemplate strategy's PrepareForUpdate:
// any change to the template counts one generation (the server has
// already carried the stored generation over to obj).
func bumpTemplateGeneration(_ context.Context, _ admission.Objects, obj, old runtime.Object) error {
	if old == nil {
		return nil
	}
	next, cur := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
	if !equality.Semantic.DeepEqual(next.Template, cur.Template) {
		next.Generation = cur.Generation + 1
	}
	return nil
}

// ValidatePodTemplateSpec is Kubernetes' rule for a pod template, wherever
// it is: valid labels and annotations, a valid pod spec (the rules pods
// and workloads share), and no ephemeral containers, which only a running
// pod can have.
func ValidatePodTemplateSpec(tmpl *corev1.PodTemplateSpec, path *field.Path) field.ErrorList {
	// Kubernetes names these template.labels, template.annotations.
	errs := metavalidation.ValidateLabels(tmpl.Labels, path.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(tmpl.Annotations, path.Child("annotations"))...)
	errs = append(errs, ValidatePodSpec(&tmpl.Spec, path.Child("spec"))...)
	if len(tmpl.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(path.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}
