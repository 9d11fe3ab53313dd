package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// LimitRanges bound, per namespace, what one container, one pod or one
// claim may ask for, and give containers that ask for nothing a default
// request and limit. The objects only describe the policy: the API
// server's LimitRanger admission plugin applies it to each new pod and
// claim (apiserver/admission/limitranger.go).
var LimitRanges = &apiserver.Resource{
	GroupVersion: v1, Name: "limitranges", Kind: "LimitRange", Namespaced: true,
	ShortNames: []string{"limits"},
	New:        func() runtime.Object { return &corev1.LimitRange{} },
	NewList:    func() runtime.Object { return &corev1.LimitRangeList{} },
	Default: func(obj runtime.Object) {
		lr := obj.(*corev1.LimitRange)
		for i := range lr.Spec.Limits {
			defaultLimitRangeItem(&lr.Spec.Limits[i])
		}
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList { return validateLimitRange(obj.(*corev1.LimitRange)) },
	// kube-apiserver has no printer for LimitRanges: its default table,
	// NAME and CREATED AT.
	Columns: []apiserver.Column{{Name: "Created At", Type: "date"}},
	Row: func(obj runtime.Object, _ time.Time) []any {
		return []any{obj.(*corev1.LimitRange).CreationTimestamp.UTC().Format(time.RFC3339)}
	},
}

// defaultLimitRangeItem is Kubernetes' SetDefaults_LimitRangeItem: for
// containers, an unset default limit is the max, and an unset default
// request is the default limit, or else the min. So "max: 1 CPU" alone
// gives every container that asks for nothing a request and a limit of
// 1 CPU.
func defaultLimitRangeItem(item *corev1.LimitRangeItem) {
	if item.Type != corev1.LimitTypeContainer {
		return
	}
	if item.Default == nil {
		item.Default = corev1.ResourceList{}
	}
	if item.DefaultRequest == nil {
		item.DefaultRequest = corev1.ResourceList{}
	}
	fill := func(dst, src corev1.ResourceList) {
		for name, q := range src {
			if _, ok := dst[name]; !ok {
				dst[name] = q.DeepCopy()
			}
		}
	}
	fill(item.Default, item.Max)
	fill(item.DefaultRequest, item.Default)
	fill(item.DefaultRequest, item.Min)
}
