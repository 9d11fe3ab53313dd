package admission

import (
	"context"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestDefaultIngressClass(t *testing.T) {
	t0 := metav1.Now()
	later := metav1.NewTime(t0.Add(1e9))
	class := func(name string, created metav1.Time, isDefault bool) runtime.Object {
		ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: created}}
		if isDefault {
			ic.Annotations = map[string]string{"ingressclass.kubernetes.io/is-default-class": "true"}
		}
		return ic
	}
	tests := []struct {
		name    string
		classes []runtime.Object
		ingress func(ing *networkingv1.Ingress)
		want    string // the class the ingress ends with; "" none
	}{
		{"no class is marked default: the ingress names none", []runtime.Object{class("nginx", t0, false)}, func(*networkingv1.Ingress) {}, ""},
		{"the default class is given to an ingress that names none", []runtime.Object{class("nginx", t0, false), class("traefik", t0, true)},
			func(*networkingv1.Ingress) {}, "traefik"},
		{"an ingress that names its class keeps it", []runtime.Object{class("traefik", t0, true)},
			func(ing *networkingv1.Ingress) { ing.Spec.IngressClassName = ptr.To("nginx") }, "nginx"},
		{"an ingress that names its class by the old annotation gets none", []runtime.Object{class("traefik", t0, true)},
			func(ing *networkingv1.Ingress) {
				ing.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
			}, ""},
		{"of two defaults the newer wins", []runtime.Object{class("b-new", later, true), class("a-old", t0, true)},
			func(*networkingv1.Ingress) {}, "b-new"},
		{"of two defaults created together the first by name wins", []runtime.Object{class("b", t0, true), class("a", t0, true)},
			func(*networkingv1.Ingress) {}, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
			tc.ingress(ing)
			err := DefaultIngressClass.Admit(context.Background(),
				&Attributes{Operation: Create, Resource: ingresses, Namespace: "default", Object: ing}, fakeObjects{ingressClasses: tc.classes})
			if err != nil {
				t.Fatal(err)
			}
			if got := ptr.Deref(ing.Spec.IngressClassName, ""); got != tc.want {
				t.Fatalf("ingressClassName %q, want %q", got, tc.want)
			}
		})
	}
}
