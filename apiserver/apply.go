package apiserver

import (
	"encoding/json"
	"fmt"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapply "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration"
	"net/http"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/applyconfigurations"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationapply "k8s.io/kube-aggregator/pkg/client/applyconfiguration"
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

// The schemas of the built-in kinds, built once, on first use: client-go's
// for its groups, apiextensions-apiserver's for CustomResourceDefinitions.
var (
	typeConverterOnce                     sync.Once
	typeConverter, apiextensionsConverter managedfields.TypeConverter
	apiregistrationConverter              managedfields.TypeConverter // APIServices, kube-aggregator's
)

func typeConverterFor(gv schema.GroupVersion) managedfields.TypeConverter {
	typeConverterOnce.Do(func() {
		typeConverter = applyconfigurations.NewTypeConverter(scheme)
		apiextensionsConverter = apiextensionsapply.NewTypeConverter(scheme)
		apiregistrationConverter = apiregistrationapply.NewTypeConverter(scheme)
	})
	if gv.Group == apiextensionsv1.GroupName {
		return apiextensionsConverter
	}
	if gv.Group == apiregistrationv1.GroupName {
		return apiregistrationConverter
	}
	return typeConverter
}

// fieldManager returns the resource's field manager, built on first use.
func (s *Server) fieldManager(res *Resource) (*managedfields.FieldManager, error) {
	s.fieldManagersMu.Lock()
	defer s.fieldManagersMu.Unlock()
	if fm, ok := s.fieldManagers[res]; ok {
		return fm, nil
	}
	var fm *managedfields.FieldManager
	var err error
	if _, custom := res.New().(*unstructured.Unstructured); custom {
		// A custom resource's fields are deduced from the objects
		// themselves: every list is atomic, every map merges by key.
		fm, err = managedfields.NewDefaultCRDFieldManager(managedfields.NewDeducedTypeConverter(), sameVersion{}, noDefaults{},
			unstructuredscheme.NewUnstructuredCreator(), res.GVK(), res.GroupVersion, "", nil)
	} else {
		fm, err = managedfields.NewDefaultFieldManager(typeConverterFor(res.GroupVersion), scheme, scheme, scheme, res.GVK(), res.GroupVersion, "", nil)
	}
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
// With fieldValidation=Strict a key given twice is refused, and so are
// the fields a custom resource's schema does not know (which are pruned
// otherwise).
func decodeApplied(data []byte, res *Resource, mode string) (*unstructured.Unstructured, error) {
	toJSON := yaml.YAMLToJSON
	if mode == "Strict" {
		toJSON = yaml.YAMLToJSONStrict
	}
	js, err := toJSON(data)
	if err != nil {
		return nil, badRequest("error decoding YAML: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(js, &u.Object); err != nil {
		return nil, badRequest("error decoding apply patch: %v", err)
	}
	if res.Decode != nil {
		obj, problems, err := res.Decode(js)
		if err != nil {
			return nil, err
		}
		u = obj.(*unstructured.Unstructured)
		if mode == "Strict" && len(problems) > 0 {
			// In structured-merge-diff's words, as the schema-typed
			// apply of kube-apiserver reports them.
			lines := make([]string, len(problems))
			for i, p := range problems {
				if path, ok := strings.CutPrefix(p, `unknown field "`); ok {
					p = "." + strings.TrimSuffix(path, `"`) + ": field not declared in schema"
				}
				lines[i] = p
			}
			return nil, badRequest("failed to create typed patch object (%s; %s): errors:\n  %s",
				u.GetNamespace()+"/"+u.GetName(), u.GroupVersionKind(), strings.Join(lines, "\n  "))
		}
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

// sameVersion converts a custom resource between its versions as the
// CustomResourceDefinition's conversion "None" does: only apiVersion
// changes.
type sameVersion struct{}

func (sameVersion) Convert(in, out, _ any) error {
	u, ok := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return fmt.Errorf("cannot convert %T to %T", in, out)
	}
	o.Object = runtime.DeepCopyJSON(u.Object)
	return nil
}

func (sameVersion) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("cannot convert %T", in)
	}
	out := u.DeepCopy()
	if target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()}); ok {
		out.SetGroupVersionKind(target)
	}
	return out, nil
}

func (sameVersion) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// noDefaults: a custom resource is defaulted from its schema on the way in.
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}
