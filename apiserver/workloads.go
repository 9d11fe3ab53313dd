package apiserver

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateWorkload checks what ReplicaSets and Deployments share: replicas,
// a selector that matches the template, an immutable selector (apps/v1), and
// a pod template that is a valid, always-restarting pod.
// oldSel is nil on create.
func validateWorkload(replicas *int32, sel, oldSel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateReplicas(replicas, spec.Child("replicas"))
	errs = append(errs, validateSelector(sel, tmpl.Labels, spec)...)
	if oldSel != nil && !equality.Semantic.DeepEqual(oldSel, sel) {
		errs = append(errs, field.Invalid(spec.Child("selector"), sel, "field is immutable"))
	}
	errs = append(errs, validatePodSpec(&tmpl.Spec, spec.Child("template", "spec"))...)
	if tmpl.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(spec.Child("template", "spec", "restartPolicy"), tmpl.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	return errs
}

func int32String(i int32) string { return fmt.Sprint(i) }
