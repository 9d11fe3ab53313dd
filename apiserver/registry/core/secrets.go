package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// Secrets are ConfigMaps for sensitive data (seed 003 §六). Their values
// are base64 in JSON (Go's []byte), and `stringData` is a write-only
// convenience that the server folds into `data`.
var Secrets = &apiserver.Resource{
	GroupVersion: v1, Name: "secrets", Kind: "Secret", Namespaced: true,
	New:     func() runtime.Object { return &corev1.Secret{} },
	NewList: func() runtime.Object { return &corev1.SecretList{} },
	Columns: []apiserver.Column{{Name: "Type", Type: "string"}, {Name: "Data", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		sec := obj.(*corev1.Secret)
		return []any{string(sec.Type), int64(len(sec.Data)), apiserver.Age(sec.CreationTimestamp, now)}
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
