package apiserver

import (
	"encoding/json"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/yaml"
)

// Server-side apply (`kubectl apply --server-side`, PATCH with
// application/apply-patch+yaml): the server merges the fields a manager
// declares into the object and records in metadata.managedFields which
// manager owns which field. Applying a field another manager owns is a
// 409 Conflict naming both, unless force=true takes it over.
//
// The merge and the bookkeeping are Kubernetes' own structured-merge-diff
// (apimachinery's managedfields), with the schemas client-go ships for the
// built-in types, so lists merge by their keys (containers by name, ports
// by port) exactly as on a real cluster.
//
// Writes that name a ?fieldManager= (kubectl always does) are tracked too;
// mkube's own components do not send one, and their writes skip the
// bookkeeping, which costs more than the rest of a write.

var (
	typeConverterOnce sync.Once
	typeConverter     managedfields.TypeConverter
)

// fieldManager returns the resource's field manager, built on first use.
func (s *Server) fieldManager(res *Resource) (*managedfields.FieldManager, error) {
	s.fieldManagersMu.Lock()
	defer s.fieldManagersMu.Unlock()
	if fm, ok := s.fieldManagers[res]; ok {
		return fm, nil
	}
	typeConverterOnce.Do(func() { typeConverter = applyconfigurations.NewTypeConverter(scheme) })
	fm, err := managedfields.NewDefaultFieldManager(typeConverter, scheme, scheme, scheme, res.GVK(), res.GroupVersion, "", nil)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	s.fieldManagers[res] = fm
	return fm, nil
}

// trackUpdate records a non-apply write by the request's field manager.
func (s *Server) trackUpdate(r *http.Request, res *Resource, live, next runtime.Object) (runtime.Object, error) {
	manager := r.URL.Query().Get("fieldManager")
	if manager == "" || res.Virtual != nil {
		return next, nil
	}
	fm, err := s.fieldManager(res)
	if err != nil {
		return nil, err
	}
	if live == nil {
		live = emptyLike(res, next)
	}
	out, err := fm.Update(live, next, manager)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// emptyLike is the "live object" of a create: nothing but its name.
func emptyLike(res *Resource, obj runtime.Object) runtime.Object {
	empty := res.New()
	empty.GetObjectKind().SetGroupVersionKind(res.GVK())
	if m, err := meta.Accessor(obj); err == nil {
		em, _ := meta.Accessor(empty)
		em.SetName(m.GetName())
		em.SetNamespace(m.GetNamespace())
	}
	return empty
}

// decodeApplied reads an apply patch (YAML or JSON) as the object it
// declares.
func decodeApplied(data []byte, res *Resource) (*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, badRequest("error decoding YAML: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(js, &u.Object); err != nil {
		return nil, badRequest("error decoding apply patch: %v", err)
	}
	if u.GroupVersionKind() != res.GVK() {
		return nil, badRequest("the apply patch is for %s, not %s", u.GroupVersionKind(), res.GVK())
	}
	if len(u.GetManagedFields()) > 0 {
		return nil, badRequest("metadata.managedFields must be nil")
	}
	return u, nil
}

// apply merges an apply patch into live (an empty object for a create).
func (s *Server) apply(r *http.Request, res *Resource, live runtime.Object, applied *unstructured.Unstructured) (runtime.Object, error) {
	manager := r.URL.Query().Get("fieldManager")
	if manager == "" {
		return nil, apierrors.NewInvalid(res.GVK().GroupKind(), applied.GetName(),
			field.ErrorList{field.Required(field.NewPath("fieldManager"), "is required for apply requests")})
	}
	fm, err := s.fieldManager(res)
	if err != nil {
		return nil, err
	}
	out, err := fm.Apply(live, applied, manager, r.URL.Query().Get("force") == "true")
	if err != nil {
		if apierrors.IsConflict(err) {
			return nil, err
		}
		return nil, badRequest("%v", err)
	}
	return out, nil
}
