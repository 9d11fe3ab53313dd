package apiserver

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

// Most Kubernetes kinds split into .Spec (what the user wants, owned by the
// main resource) and .Status (what is, owned by the status subresource).
// kube-apiserver's strategies copy these fields by hand for every kind; the
// shape is the same everywhere, so mkube does it once, by reflection.

func fieldOf(obj runtime.Object, name string) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName(name)
}

// hasSpec reports whether the kind has a .Spec field.
func hasSpec(obj runtime.Object) bool { return fieldOf(obj, "Spec").IsValid() }

// specChanged reports whether .Spec differs; metadata.generation counts these.
func specChanged(a, b runtime.Object) bool {
	sa, sb := fieldOf(a, "Spec"), fieldOf(b, "Spec")
	if !sa.IsValid() || !sb.IsValid() {
		return false
	}
	return !equality.Semantic.DeepEqual(sa.Interface(), sb.Interface())
}

// copyField sets dst.<name> = src.<name> (a shallow copy of that field).
func copyField(dst, src runtime.Object, name string) {
	d, s := fieldOf(dst, name), fieldOf(src, name)
	if d.IsValid() && s.IsValid() {
		d.Set(s)
	}
}

// resetField sets obj.<name> to its zero value.
func resetField(obj runtime.Object, name string) {
	if f := fieldOf(obj, name); f.IsValid() {
		f.Set(reflect.Zero(f.Type()))
	}
}
