package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// ConfigMaps are configuration handed to pods as environment variables or
// files (seed 003 §七).
var ConfigMaps = &apiserver.Resource{
	GroupVersion: v1, Name: "configmaps", Kind: "ConfigMap", Namespaced: true,
	ShortNames: []string{"cm"},
	New:        func() runtime.Object { return &corev1.ConfigMap{} },
	NewList:    func() runtime.Object { return &corev1.ConfigMapList{} },
	Columns:    []apiserver.Column{{Name: "Data", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		cm := obj.(*corev1.ConfigMap)
		return []any{int64(len(cm.Data) + len(cm.BinaryData)), apiserver.Age(cm.CreationTimestamp, now)}
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		cm := obj.(*corev1.ConfigMap)
		errs := validateConfigKeys(keysOf(cm.Data), field.NewPath("data"))
		errs = append(errs, validateConfigKeys(keysOf(cm.BinaryData), field.NewPath("binaryData"))...)
		for k := range cm.Data {
			if _, dup := cm.BinaryData[k]; dup {
				errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, "duplicate of key present in binaryData"))
			}
		}
		return append(errs, validateImmutableData(cm.Immutable, old, func(o runtime.Object) (*bool, any) {
			prev := o.(*corev1.ConfigMap)
			return prev.Immutable, [2]any{prev.Data, prev.BinaryData}
		}, [2]any{cm.Data, cm.BinaryData})...)
	},
}
