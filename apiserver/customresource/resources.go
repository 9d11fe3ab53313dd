// Package customresource serves the kinds CustomResourceDefinitions
// define, as kube-apiserver's apiextensions-apiserver does: each served
// version of an established definition becomes an apiserver.Resource
// whose objects are unstructured (JSON maps), checked by the version's
// OpenAPI schema instead of a Go type, and stored, whatever version a
// client speaks, in etcd under /registry/<group>/<plural> in the storage
// version. Everything else (lists, watches, selectors, finalizers,
// generations, tables, server-side apply, RBAC) is the generic machinery
// the built-in kinds use.
//
// The Controller keeps the served resources in step with the definitions:
// it accepts names, marks a definition Established, and on deletion
// removes its objects before the definition goes.
//
// Where things live:
//
//	file           what it holds
//	resources.go   Resources: the apiserver.Resource of each served version of a definition
//	schema.go      a version's structural schema: decoding, pruning and coercing, defaults, validation
//	openapi.go     the schemas published in the server's OpenAPI documents
//	scale.go       the scale subresource: a Scale read from and written to the paths of subresources.scale
//	conversion.go  converting between versions: None (the apiVersion rewritten) or a conversion webhook
//	controller.go  the Controller: names accepted, Established, the served resources kept in step, deletion
package customresource

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// Resources are the resources that serve a definition: one per served
// version. hooks call its conversion webhook, if it has one
// (conversion.go).
func Resources(crd *apiextensionsv1.CustomResourceDefinition, hooks *Webhooks) ([]*apiserver.Resource, error) {
	storage := ""
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			storage = v.Name
		}
	}
	storedGVK := schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.Kind}
	convert := converterFor(crd, hooks)
	var out []*apiserver.Resource
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		res, err := resourceFor(crd, v, storedGVK, convert)
		if err != nil {
			return nil, fmt.Errorf("version %s: %w", v.Name, err)
		}
		out = append(out, res)
	}
	return out, nil
}

func resourceFor(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion,
	storedGVK schema.GroupVersionKind, convert converter) (*apiserver.Resource, error) {
	names := crd.Spec.Names
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
	gvk := gv.WithKind(names.Kind)
	vs, err := newVersionSchema(gvk, v.Schema)
	if err != nil {
		return nil, err
	}
	columns := v.AdditionalPrinterColumns
	if len(columns) == 0 {
		columns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
	}
	table, err := tableconvertor.New(columns)
	if err != nil {
		return nil, err
	}
	schemaSet, err := publishedSchemas(crd, v.Name)
	if err != nil {
		return nil, err
	}
	newObject := func(gvk schema.GroupVersionKind) func() runtime.Object {
		return func() runtime.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		}
	}
	res := &apiserver.Resource{
		GroupVersion: gv, Name: names.Plural, Kind: names.Kind,
		Namespaced:  crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		ShortNames:  names.ShortNames,
		Categories:  names.Categories,
		StorageName: crd.Spec.Group + "/" + names.Plural,
		New:         newObject(gvk),
		NewList: func() runtime.Object {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(gv.WithKind(names.ListKind))
			return l
		},
		// An object is written in the storage version and read back
		// from the version it was stored at, both converted as
		// spec.conversion says (conversion.go). What comes back from
		// etcd is defaulted by the reader's schema, so a default added
		// to the schema later shows on old objects too.
		StoredAs: &apiserver.Conversion{
			New: newObject(storedGVK), GVK: storedGVK,
			ToStored: func(obj runtime.Object) (runtime.Object, error) {
				return convert(obj.(*unstructured.Unstructured).DeepCopy(), storedGVK.GroupVersion().String())
			},
			FromStored: func(obj runtime.Object) (runtime.Object, error) {
				u, err := convert(obj.(*unstructured.Unstructured), gv.String())
				if err != nil {
					return nil, err
				}
				u.SetGroupVersionKind(gvk)
				vs.applyDefaults(u)
				return u, nil
			},
		},
		Decode: func(data []byte) (runtime.Object, []string, error) {
			u, problems, err := vs.decode(data)
			if err != nil {
				return nil, nil, err
			}
			return u, problems, nil
		},
		Default: func(obj runtime.Object) { vs.applyDefaults(obj.(*unstructured.Unstructured)) },
		Validate: func(obj, old runtime.Object) field.ErrorList {
			var prev *unstructured.Unstructured
			if old != nil {
				prev = old.(*unstructured.Unstructured)
			}
			errs := vs.validate(obj.(*unstructured.Unstructured), prev)
			if scale := scaleOfVersion(v); scale != nil {
				errs = append(errs, validateScale(obj.(*unstructured.Unstructured), scale)...)
			}
			return errs
		},
		Schema: schemaSet,
		Row: func(obj runtime.Object, _ time.Time) []any {
			t, err := table.ConvertToTable(context.Background(), obj, nil)
			if err != nil || len(t.Rows) == 0 {
				return nil
			}
			return t.Rows[0].Cells[1:]
		},
	}
	if len(v.SelectableFields) > 0 {
		res.Fields = selectableFields(v.SelectableFields)
	}
	for _, c := range columns {
		res.Columns = append(res.Columns, apiserver.Column{Name: c.Name, Type: c.Type, Priority: c.Priority})
	}
	if v.Subresources != nil && v.Subresources.Status != nil {
		res.Subresources = append(res.Subresources, apiserver.StatusSubresource)
	}
	if scale := scaleOfVersion(v); scale != nil {
		res.Subresources = append(res.Subresources, scaleSubresource(scale))
	}
	return res, nil
}

// scaleOfVersion is the version's subresources.scale, nil if it has none.
func scaleOfVersion(v *apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceSubresourceScale {
	if v.Subresources == nil {
		return nil
	}
	return v.Subresources.Scale
}

// selectableFields are the fields a version lets field selectors match
// (spec.versions[].selectableFields: `kubectl get widgets
// --field-selector spec.colour=red`), each a path of field names.
func selectableFields(defs []apiextensionsv1.SelectableField) func(runtime.Object) fields.Set {
	return func(obj runtime.Object) fields.Set {
		u := obj.(*unstructured.Unstructured)
		set := fields.Set{}
		for _, d := range defs {
			path := strings.Split(strings.TrimPrefix(d.JSONPath, "."), ".")
			if v, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...); found && v != nil {
				set[strings.Join(path, ".")] = fmt.Sprint(v)
			} else {
				set[strings.Join(path, ".")] = ""
			}
		}
		return set
	}
}
