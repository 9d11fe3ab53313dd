// Package node declares node.k8s.io/v1 RuntimeClasses: a name a pod
// gives in spec.runtimeClassName to ask for a container runtime
// configuration (the CRI handler: runc, gVisor's runsc, Kata...). The
// RuntimeClass admission plugin (apiserver/admission) refuses a pod whose
// class does not exist, sets its spec.overhead from the class and adds
// the class's nodeSelector and tolerations; the kubelet passes the
// handler to the runtime's RunPodSandbox, which refuses one it has not
// got (cri/runtimehandlers.go).
//
// Where things live:
//
//	file               what it holds
//	runtimeclasses.go  the RuntimeClass kind and its validation
//	validation.go      the validation of its overhead and its scheduling tolerations
package node

import (
	"time"

	nodev1 "k8s.io/api/node/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

var RuntimeClasses = &apiserver.Resource{
	GroupVersion: nodev1.SchemeGroupVersion, Name: "runtimeclasses", Kind: "RuntimeClass",
	New:      func() runtime.Object { return &nodev1.RuntimeClass{} },
	NewList:  func() runtime.Object { return &nodev1.RuntimeClassList{} },
	Validate: validateRuntimeClass,
	Columns:  []apiserver.Column{{Name: "Handler", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		rc := obj.(*nodev1.RuntimeClass)
		return []any{rc.Handler, apiserver.Age(rc.CreationTimestamp, now)}
	},
}

// validateRuntimeClass is Kubernetes' ValidateRuntimeClass and
// ValidateRuntimeClassUpdate: the handler is a DNS label (it names a
// section of the runtime's configuration) and is fixed once created; the
// overhead is a list of resources as a container's limits are; the
// scheduling constraints are a valid label map and tolerations.
func validateRuntimeClass(obj, old runtime.Object) field.ErrorList {
	rc := obj.(*nodev1.RuntimeClass)
	handler := field.NewPath("handler")
	var errs field.ErrorList
	if rc.Handler == "" {
		errs = append(errs, field.Required(handler, ""))
	} else {
		for _, msg := range apivalidation.NameIsDNSLabel(rc.Handler, false) {
			errs = append(errs, field.Invalid(handler, rc.Handler, msg))
		}
	}
	if rc.Overhead != nil {
		errs = append(errs, validateOverhead(rc.Overhead, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		path := field.NewPath("scheduling")
		errs = append(errs, metav1validation.ValidateLabels(s.NodeSelector, path.Child("nodeSelector"))...)
		errs = append(errs, validateTolerations(s.Tolerations, path.Child("tolerations"))...)
	}
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(rc.Handler, old.(*nodev1.RuntimeClass).Handler, handler)...)
	}
	return errs
}
