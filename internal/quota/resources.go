package quota

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The arithmetic of ResourceLists that quota does: usage is added and
// subtracted name by name, and compared to the hard limits only on the
// names both have. None of these functions changes its arguments.

// Add returns a + b: every name of either, summed where both have it.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range a {
		out[name] = q.DeepCopy()
	}
	for name, q := range b {
		if sum, ok := out[name]; ok {
			sum.Add(q)
			out[name] = sum
		} else {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// SubtractNonNegative returns a - b on a's names, with a negative result
// as zero: what an update adds to the usage of the object it replaces
// (Kubernetes' SubtractWithNonNegativeResult).
func SubtractNonNegative(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range a {
		diff := q.DeepCopy()
		if other, ok := b[name]; ok {
			diff.Sub(other)
		}
		if diff.Sign() < 0 {
			diff = resource.Quantity{Format: q.Format}
		}
		out[name] = diff
	}
	return out
}

// Mask returns the entries of list whose names are in names.
func Mask(list corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, name := range names {
		if q, ok := list[name]; ok {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// Names returns list's names, sorted.
func Names(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// LessThanOrEqual reports whether a <= limit for every name both have,
// and the names where a is over, sorted.
func LessThanOrEqual(a, limit corev1.ResourceList) (bool, []corev1.ResourceName) {
	var over []corev1.ResourceName
	for name, max := range limit {
		if q, ok := a[name]; ok && q.Cmp(max) > 0 {
			over = append(over, name)
		}
	}
	slices.Sort(over)
	return len(over) == 0, over
}

// Equals reports whether a and b have the same names with equal
// quantities (1000m equals 1).
func Equals(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		other, ok := b[name]
		if !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

// RemoveZeros returns list without its zero entries.
func RemoveZeros(list corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range list {
		if !q.IsZero() {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// Negative returns the names whose quantity is below zero, sorted.
func Negative(list corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for name, q := range list {
		if q.Sign() < 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Format writes list as the admission plugin's messages do, sorted by
// name: "cpu=600m,pods=1".
func Format(list corev1.ResourceList) string {
	parts := make([]string, 0, len(list))
	for _, name := range Names(list) {
		q := list[name]
		parts = append(parts, string(name)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// FormatNames writes names sorted and comma-separated: "cpu,memory".
func FormatNames(names []corev1.ResourceName) string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	parts := make([]string, len(sorted))
	for i, name := range sorted {
		parts[i] = string(name)
	}
	return strings.Join(parts, ",")
}

// one is a count of one object.
func one() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }

// zero is a count of none, formatted as counts are.
func zero() resource.Quantity { return resource.Quantity{Format: resource.DecimalSI} }
