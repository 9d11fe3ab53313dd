package admission

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/internal/defaultclass"
)

// DefaultIngressClass gives a new Ingress that names no IngressClass the
// one annotated ingressclass.kubernetes.io/is-default-class: "true", as
// DefaultStorageClass does for claims, so that users need not know which
// controller the cluster runs. An Ingress that names its class the old
// way, with the kubernetes.io/ingress.class annotation, keeps it.
var DefaultIngressClass = Plugin{Name: "DefaultIngressClass", Admit: admitDefaultIngressClass, Handles: []Operation{Create}}

var (
	ingresses      = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	ingressClasses = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}
)

// legacyIngressClassAnnotation named an Ingress's class before
// spec.ingressClassName (networking.k8s.io/v1beta1's AnnotationIngressClass).
const legacyIngressClassAnnotation = "kubernetes.io/ingress.class"

func admitDefaultIngressClass(ctx context.Context, a *Attributes, objs Objects) error {
	if a.Resource != ingresses || a.Subresource != "" {
		return nil
	}
	ing := a.Object.(*networkingv1.Ingress)
	if ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, ok := ing.Annotations[legacyIngressClassAnnotation]; ok {
		return nil
	}
	list, err := objs.List(ctx, ingressClasses, "")
	if err != nil {
		return apierrors.NewForbidden(ingresses.GroupResource(), ing.Name, err)
	}
	classes := make([]*networkingv1.IngressClass, len(list))
	for i, o := range list {
		classes[i] = o.(*networkingv1.IngressClass)
	}
	if def := defaultIngressClass(classes); def != nil {
		ing.Spec.IngressClassName = &def.Name
	}
	return nil
}

// defaultIngressClass is the class an Ingress that names none gets, or
// nil: of the classes marked default, the newest, and of those created
// at the same instant the first by name (Kubernetes' getDefaultClass,
// which tolerates two defaults while an administrator moves from one to
// the other).
func defaultIngressClass(classes []*networkingv1.IngressClass) *networkingv1.IngressClass {
	return defaultclass.Newest(classes, func(ic *networkingv1.IngressClass) bool {
		return ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true"
	})
}
