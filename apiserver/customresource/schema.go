package customresource

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// versionSchema is what one version's OpenAPI schema does to its objects,
// with Kubernetes' own libraries (k8s.io/apiextensions-apiserver), in the
// order kube-apiserver applies them:
//
//  1. decode: fields the schema does not know are pruned (dropped, and
//     named for ?fieldValidation: `unknown field "spec.colour"`), and
//     metadata is coerced to ObjectMeta;
//  2. default: the schema's defaults fill what is missing, on the way in
//     and on every read from etcd;
//  3. validate: types, formats, enums, required fields, list types.
//
// x-kubernetes-preserve-unknown-fields keeps what it covers, at the root
// too (a CRD that accepts anything).
type versionSchema struct {
	gvk        schema.GroupVersionKind
	structural *structuralschema.Structural // nil: no schema
	validator  apiservervalidation.SchemaValidator
}

func newVersionSchema(gvk schema.GroupVersionKind, v *apiextensionsv1.CustomResourceValidation) (*versionSchema, error) {
	vs := &versionSchema{gvk: gvk}
	if v == nil || v.OpenAPIV3Schema == nil {
		return vs, nil
	}
	internal := &apiextensionsinternal.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("the schema of %s is not structural: %w", gvk.Version, err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, err
	}
	vs.structural, vs.validator = s, validator
	return vs, nil
}

// decode reads a body, JSON or YAML, as an object of the version: a body
// without apiVersion and kind is taken to be of the URL's kind, as for the
// built-in kinds. It returns the fields it dropped or found twice.
func (vs *versionSchema) decode(data []byte) (*unstructured.Unstructured, []string, error) {
	js := data
	var problems []string
	if trimmed := bytes.TrimSpace(data); !bytes.HasPrefix(trimmed, []byte("{")) {
		strict, err := yaml.YAMLToJSONStrict(data)
		if err != nil {
			// A duplicate key is only a problem; anything else is not YAML.
			lax, laxErr := yaml.YAMLToJSON(data)
			if laxErr != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", laxErr))
			}
			problems = append(problems, err.Error())
			strict = lax
		}
		js = strict
	}
	u := &unstructured.Unstructured{}
	strictErrs, err := kjson.UnmarshalStrict(js, &u.Object)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding JSON: %v", err))
	}
	if u.Object == nil {
		return nil, nil, apierrors.NewBadRequest("the body is not a JSON object")
	}
	for _, e := range strictErrs {
		problems = append(problems, e.Error())
	}
	if u.GetAPIVersion() == "" && u.GetKind() == "" {
		u.SetGroupVersionKind(vs.gvk)
	}
	if got := u.GroupVersionKind(); got.GroupVersion() != vs.gvk.GroupVersion() {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", got.GroupVersion(), vs.gvk.GroupVersion()))
	} else if got.Kind != vs.gvk.Kind {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", got.Kind, vs.gvk.Kind))
	}
	unknown, err := vs.coerce(u)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	for _, path := range unknown {
		problems = append(problems, fmt.Sprintf("unknown field %q", path))
	}
	return u, problems, nil
}

// coerce prunes what the schema does not know and makes metadata an
// ObjectMeta, as kube-apiserver's schema coercer does; it returns the
// paths it dropped.
func (vs *versionSchema) coerce(u *unstructured.Unstructured) ([]string, error) {
	apiVersion, kind := u.GetAPIVersion(), u.GetKind()
	meta, hasMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object,
		schemaobjectmeta.ObjectMetaOptions{DropMalformedFields: false, ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil, err
	}
	if vs.structural != nil {
		unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, vs.structural, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, vs.structural)
		ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, vs.structural, false,
			schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
		if ferr != nil {
			return nil, ferr
		}
		unknown = append(unknown, paths...)
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if hasMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, meta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// applyDefaults fills the schema's defaults into u.
func (vs *versionSchema) applyDefaults(u *unstructured.Unstructured) {
	if vs.structural != nil {
		structuraldefaulting.Default(u.Object, vs.structural)
	}
}

// validate checks u against the schema; old is nil on create.
func (vs *versionSchema) validate(u, old *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if vs.structural == nil {
		return nil
	}
	errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, u.Object, vs.structural, false)...)
	if old == nil {
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.UnstructuredContent(), vs.validator)...)
	} else {
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, u.UnstructuredContent(), old.UnstructuredContent(), vs.validator)...)
	}
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, vs.structural, u.Object)...)
	// The validator walks maps in Go's random order; a user sees the same
	// message twice in the same order.
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}
