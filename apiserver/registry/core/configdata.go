package core

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules ConfigMaps and Secrets share: keys that are file and variable
// names, and immutability.

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
