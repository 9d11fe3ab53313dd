// Package defaultclass chooses the default among classes (StorageClasses,
// IngressClasses) that an administrator marks default with an annotation.
package defaultclass

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Newest is the class an object that names none gets, or the zero value:
// among the classes isDefault marks, the newest, and of those created at
// the same instant the first by name (Kubernetes' GetDefaultClass and
// getDefaultClass, which tolerate two defaults while an administrator
// switches from one to the other).
func Newest[T metav1.Object](classes []T, isDefault func(T) bool) T {
	var defaults []T
	for _, c := range classes {
		if isDefault(c) {
			defaults = append(defaults, c)
		}
	}
	var none T
	if len(defaults) == 0 {
		return none
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].GetCreationTimestamp().UnixNano(), defaults[j].GetCreationTimestamp().UnixNano()
		if ti == tj {
			return defaults[i].GetName() < defaults[j].GetName()
		}
		return ti > tj
	})
	return defaults[0]
}
