package apiserver

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ConfigMaps and Secrets: configuration handed to pods as environment
// variables or files (seed 003). A Secret's values are base64 in JSON
// (Go's []byte), and `stringData` is a write-only convenience that the
// server folds into `data`.

var configMapsResource = &Resource{
	GroupVersion: corev1.SchemeGroupVersion, Name: "configmaps", Kind: "ConfigMap", Namespaced: true,
	ShortNames: []string{"cm"},
	New:        func() runtime.Object { return &corev1.ConfigMap{} },
	NewList:    func() runtime.Object { return &corev1.ConfigMapList{} },
	Columns:    []Column{{Name: "Data", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		cm := obj.(*corev1.ConfigMap)
		return []any{int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}
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

var secretsResource = &Resource{
	GroupVersion: corev1.SchemeGroupVersion, Name: "secrets", Kind: "Secret", Namespaced: true,
	New:     func() runtime.Object { return &corev1.Secret{} },
	NewList: func() runtime.Object { return &corev1.SecretList{} },
	Columns: []Column{{Name: "Type", Type: "string"}, {Name: "Data", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		sec := obj.(*corev1.Secret)
		return []any{string(sec.Type), int64(len(sec.Data)), age(sec.CreationTimestamp, now)}
	},
	Default: func(obj runtime.Object) {
		sec := obj.(*corev1.Secret)
		if sec.Type == "" {
			sec.Type = corev1.SecretTypeOpaque
		}
		for k, v := range sec.StringData {
			if sec.Data == nil {
				sec.Data = map[string][]byte{}
			}
			sec.Data[k] = []byte(v)
		}
		sec.StringData = nil
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		sec := obj.(*corev1.Secret)
		errs := validateConfigKeys(keysOf(sec.Data), field.NewPath("data"))
		required := map[corev1.SecretType]string{
			corev1.SecretTypeDockerConfigJson: corev1.DockerConfigJsonKey,
			corev1.SecretTypeDockercfg:        corev1.DockerConfigKey,
			corev1.SecretTypeBasicAuth:        "",
			corev1.SecretTypeTLS:              corev1.TLSCertKey,
		}
		if key, ok := required[sec.Type]; ok && key != "" {
			if _, has := sec.Data[key]; !has {
				errs = append(errs, field.Required(field.NewPath("data").Key(key), ""))
			}
		}
		if sec.Type == corev1.SecretTypeServiceAccountToken && sec.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
		if old != nil && old.(*corev1.Secret).Type != sec.Type {
			errs = append(errs, field.Invalid(field.NewPath("type"), sec.Type, "field is immutable"))
		}
		return append(errs, validateImmutableData(sec.Immutable, old, func(o runtime.Object) (*bool, any) {
			prev := o.(*corev1.Secret)
			return prev.Immutable, prev.Data
		}, sec.Data)...)
	},
	Fields: func(obj runtime.Object) fields.Set { return fields.Set{"type": string(obj.(*corev1.Secret).Type)} },
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// validateConfigKeys: keys become file names and variable names, so they
// must be valid as both ("a valid config key must consist of alphanumeric
// characters, '-', '_' or '.'").
func validateConfigKeys(keys []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range keys {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, msg))
		}
	}
	return errs
}

// validateImmutableData: once `immutable: true`, the data and the flag
// itself can no longer change.
func validateImmutableData(immutable *bool, old runtime.Object, oldData func(runtime.Object) (*bool, any), data any) field.ErrorList {
	if old == nil {
		return nil
	}
	wasImmutable, prev := oldData(old)
	if wasImmutable == nil || !*wasImmutable {
		return nil
	}
	var errs field.ErrorList
	if immutable == nil || !*immutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	if !equality.Semantic.DeepEqual(prev, data) {
		errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
	}
	return errs
}
