package networking

import (
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

// IngressClasses name the controller that implements an Ingress
// (spec.controller, "example.com/ingress-controller") and, optionally, an
// object with its settings (spec.parameters). The class annotated
// ingressclass.kubernetes.io/is-default-class: "true" is what an Ingress
// that names none gets (the DefaultIngressClass admission plugin).
var IngressClasses = &apiserver.Resource{
	GroupVersion: networkingv1.SchemeGroupVersion, Name: "ingressclasses", Kind: "IngressClass",
	New:     func() runtime.Object { return &networkingv1.IngressClass{} },
	NewList: func() runtime.Object { return &networkingv1.IngressClassList{} },
	// Kubernetes' SetDefaults_IngressClass: parameters are the cluster's
	// unless they say they are a namespace's.
	Default: func(obj runtime.Object) {
		if p := obj.(*networkingv1.IngressClass).Spec.Parameters; p != nil && p.Scope == nil {
			p.Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster)
		}
	},
	Validate: validateIngressClass,
	NameCell: func(obj runtime.Object) string {
		ic := obj.(*networkingv1.IngressClass)
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			return ic.Name + " (default)" // as kubectl prints the default class
		}
		return ic.Name
	},
	Columns: []apiserver.Column{{Name: "Controller", Type: "string"}, {Name: "Parameters", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		ic := obj.(*networkingv1.IngressClass)
		return []any{ic.Spec.Controller, ingressClassParameters(ic.Spec.Parameters), apiserver.Age(ic.CreationTimestamp, now)}
	},
}

// ingressClassParameters is the PARAMETERS cell: kind.group/name.
func ingressClassParameters(p *networkingv1.IngressClassParametersReference) string {
	if p == nil {
		return "<none>"
	}
	out := p.Kind
	if p.APIGroup != nil {
		out += "." + *p.APIGroup
	}
	return out + "/" + p.Name
}

// maxControllerLength is Kubernetes' limit on spec.controller.
const maxControllerLength = 250

var parameterScopes = sets.New(networkingv1.IngressClassParametersReferenceScopeNamespace, networkingv1.IngressClassParametersReferenceScopeCluster)

// validateIngressClass is Kubernetes' ValidateIngressClass and
// ValidateIngressClassUpdate: a domain-prefixed controller name that is
// fixed once created, and a parameters reference that is complete and
// says where its object lives.
func validateIngressClass(obj, old runtime.Object) field.ErrorList {
	ic := obj.(*networkingv1.IngressClass)
	controller := field.NewPath("spec", "controller")
	var errs field.ErrorList
	if len(ic.Spec.Controller) > maxControllerLength {
		errs = append(errs, field.TooLong(controller, "", maxControllerLength))
	}
	errs = append(errs, validation.IsDomainPrefixedPath(controller, ic.Spec.Controller)...)
	errs = append(errs, validateParameters(ic.Spec.Parameters, field.NewPath("spec", "parameters"))...)
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(ic.Spec.Controller, old.(*networkingv1.IngressClass).Spec.Controller, controller)...)
	}
	return errs
}

func validateParameters(p *networkingv1.IngressClassParametersReference, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	if p.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*p.APIGroup) {
			errs = append(errs, field.Invalid(path.Child("apiGroup"), *p.APIGroup, msg))
		}
	}
	errs = append(errs, requiredPathSegment(p.Kind, path.Child("kind"))...)
	errs = append(errs, requiredPathSegment(p.Name, path.Child("name"))...)
	if p.Scope == nil {
		return append(errs, field.Required(path.Child("scope"), ""))
	}
	switch *p.Scope {
	case networkingv1.IngressClassParametersReferenceScopeNamespace:
		if p.Namespace == nil {
			errs = append(errs, field.Required(path.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
			break
		}
		for _, msg := range apivalidation.ValidateNamespaceName(*p.Namespace, false) {
			errs = append(errs, field.Invalid(path.Child("namespace"), *p.Namespace, msg))
		}
	case networkingv1.IngressClassParametersReferenceScopeCluster:
		if p.Namespace != nil {
			errs = append(errs, field.Forbidden(path.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("scope"), *p.Scope, sets.List(parameterScopes)))
	}
	return errs
}
