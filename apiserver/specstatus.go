package apiserver

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Most Kubernetes kinds split into .Spec (what the user wants, owned by the
// main resource) and .Status (what is, owned by the status subresource).
// kube-apiserver's strategies copy these fields by hand for every kind; the
// shape is the same everywhere, so mkube does it once, by reflection.
// Custom resources are maps (unstructured.Unstructured): there "spec" is
// every field but metadata and status, as the API server's custom
// resource strategy counts generations.

func fieldOf(obj runtime.Object, name string) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName(name)
}

// hasSpec reports whether the kind has a .Spec field.
func hasSpec(obj runtime.Object) bool {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return true
	}
	return fieldOf(obj, "Spec").IsValid()
}

// specChanged reports whether .Spec differs; metadata.generation counts these.
func specChanged(a, b runtime.Object) bool {
	if ua, ok := a.(*unstructured.Unstructured); ok {
		ub, _ := b.(*unstructured.Unstructured)
		return ub != nil && !equality.Semantic.DeepEqual(withoutMetadataAndStatus(ua), withoutMetadataAndStatus(ub))
	}
	sa, sb := fieldOf(a, "Spec"), fieldOf(b, "Spec")
	if !sa.IsValid() || !sb.IsValid() {
		return false
	}
	return !equality.Semantic.DeepEqual(sa.Interface(), sb.Interface())
}

// withoutMetadataAndStatus is a custom resource's "spec", shallowly.
func withoutMetadataAndStatus(u *unstructured.Unstructured) map[string]any {
	out := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if k != "metadata" && k != "status" {
			out[k] = v
		}
	}
	return out
}

// copyField sets dst.<name> = src.<name> (a shallow copy of that field).
func copyField(dst, src runtime.Object, name string) {
	if ud, ok := dst.(*unstructured.Unstructured); ok {
		us, _ := src.(*unstructured.Unstructured)
		key := strings.ToLower(name)
		if v, found := us.Object[key]; found {
			ud.Object[key] = v
		} else {
			delete(ud.Object, key)
		}
		return
	}
	d, s := fieldOf(dst, name), fieldOf(src, name)
	if d.IsValid() && s.IsValid() {
		d.Set(s)
	}
}

// resetField sets obj.<name> to its zero value.
func resetField(obj runtime.Object, name string) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		delete(u.Object, strings.ToLower(name))
		return
	}
	if f := fieldOf(obj, name); f.IsValid() {
		f.Set(reflect.Zero(f.Type()))
	}
}
