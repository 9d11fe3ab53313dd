package core

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// Endpoints list the addresses of the ready pods behind a Service; the
// endpoints controller keeps them (seed 003, Service and Endpoints).
var Endpoints = &apiserver.Resource{
	GroupVersion: v1, Name: "endpoints", Kind: "Endpoints", Namespaced: true,
	ShortNames: []string{"ep"},
	New:        func() runtime.Object { return &corev1.Endpoints{} },
	NewList:    func() runtime.Object { return &corev1.EndpointsList{} },
	Default:    defaultEndpoints,
	Validate:   func(obj, _ runtime.Object) field.ErrorList { return validateEndpoints(obj.(*corev1.Endpoints)) },
	Columns:    []apiserver.Column{{Name: "Endpoints", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		ep := obj.(*corev1.Endpoints)
		var addrs []string
		for _, sub := range ep.Subsets {
			for _, a := range sub.Addresses {
				for _, p := range sub.Ports {
					addrs = append(addrs, fmt.Sprintf("%s:%d", a.IP, p.Port))
				}
			}
		}
		cell := strings.Join(addrs, ",")
		if len(addrs) > 3 {
			cell = strings.Join(addrs[:3], ",") + fmt.Sprintf(" + %d more...", len(addrs)-3)
		}
		return []any{apiserver.OrNone(cell), apiserver.Age(ep.CreationTimestamp, now)}
	},
}
