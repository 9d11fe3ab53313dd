package resource

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateList is Kubernetes' validateSlice for DRA's lists: at most max
// items (a negative max bounds nothing), each valid. A list that is too
// long is refused with that error alone, before any item is looked at:
// the bounds are there so that a huge object costs the server nothing.
func validateList[T any](items []T, max int, validate func(T, *field.Path) field.ErrorList, path *field.Path) field.ErrorList {
	if max >= 0 && len(items) > max {
		return field.ErrorList{field.TooMany(path, len(items), max)}
	}
	var errs field.ErrorList
	for i, item := range items {
		errs = append(errs, validate(item, path.Index(i))...)
	}
	return errs
}

// validateSet is Kubernetes' validateSet: validateList whose items are
// also unique by key; the second of two alike is the Duplicate.
func validateSet[T any, K comparable](items []T, max int, key func(T) K, validate func(T, *field.Path) field.ErrorList, path *field.Path) field.ErrorList {
	if max >= 0 && len(items) > max {
		return field.ErrorList{field.TooMany(path, len(items), max)}
	}
	errs := validateList(items, -1, validate, path)
	seen := sets.New[K]()
	for i, item := range items {
		k := key(item)
		if seen.Has(k) {
			errs = append(errs, field.Duplicate(path.Index(i), k))
		}
		seen.Insert(k)
	}
	return errs
}
