package core

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/internal/seedstep"
)

// What the kinds that keep pods running from a template share, here and in
// the apps group: ReplicationControllers, ReplicaSets and Deployments.

// ValidateWorkload checks replicas, a selector that matches the template,
// an immutable selector (apps/v1), and a pod template that is a valid,
// always-restarting pod. oldSel is nil on create.
func ValidateWorkload(replicas *int32, sel, oldSel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if replicas != nil && *replicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *replicas, "must be greater than or equal to 0"))
	}
	errs = append(errs, validateSelector(sel, tmpl.Labels, spec)...)
	if oldSel != nil && !equality.Semantic.DeepEqual(oldSel, sel) {
		errs = append(errs, field.Invalid(spec.Child("selector"), sel, "field is immutable"))
	}
	errs = append(errs, ValidatePodSpec(&tmpl.Spec, spec.Child("template", "spec"))...)
	if tmpl.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(spec.Child("template", "spec", "restartPolicy"), tmpl.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	return errs
}

// validateSelector checks a workload's selector: required, non-empty, and
// matching the pod template's labels, or the controller would create pods
// it never counts as its own.
func validateSelector(sel *metav1.LabelSelector, tmplLabels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sel == nil {
		return field.ErrorList{field.Required(path.Child("selector"), "")}
	}
	errs = append(errs, metavalidation.ValidateLabelSelector(sel, metavalidation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(path.Child("selector"), sel, "empty selector is invalid for deployment"))
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err == nil && !s.Empty() && !s.Matches(labels.Set(tmplLabels)) {
		errs = append(errs, field.Invalid(path.Child("template", "metadata", "labels"), tmplLabels, "`selector` does not match template `labels`"))
	}
	return errs
}

// DefaultReplicas: one replica unless asked otherwise.
func DefaultReplicas(r **int32) {
	if *r == nil {
		*r = ptr.To[int32](1)
	}
}

// WorkloadWriteStep: a new workload is seed 000's step 3, as a pod is.
func WorkloadWriteStep(info apiserver.RequestInfo, _ runtime.Object) (int, string) {
	if info.Verb == "create" && info.Subresource == "" {
		return seedstep.StoredAndAcknowledged, "stored the new workload in etcd and acknowledged the client"
	}
	return 0, ""
}

// WorkloadWideColumns are the columns `-o wide` adds for every workload.
var WorkloadWideColumns = []apiserver.Column{
	{Name: "Containers", Type: "string", Priority: 1}, {Name: "Images", Type: "string", Priority: 1},
	{Name: "Selector", Type: "string", Priority: 1},
}

// ReplicatedColumns are the columns of ReplicaSets and ReplicationControllers.
var ReplicatedColumns = append([]apiserver.Column{
	{Name: "Desired", Type: "integer"}, {Name: "Current", Type: "integer"}, {Name: "Ready", Type: "integer"},
	{Name: "Age", Type: "string"},
}, WorkloadWideColumns...)

// ContainersAndImages are the wide columns' cells of a pod template.
func ContainersAndImages(spec *corev1.PodSpec) (string, string) {
	var names, images []string
	for _, c := range spec.Containers {
		names = append(names, c.Name)
		images = append(images, c.Image)
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

// SelectorString is a label selector's cell.
func SelectorString(sel *metav1.LabelSelector) string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "<error>"
	}
	return apiserver.OrNone(s.String())
}
