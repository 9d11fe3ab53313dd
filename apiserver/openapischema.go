package apiserver

import (
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// OpenAPI v3 schemas for `kubectl explain`, generated from the real Go
// types: field names and types by reflection over their json tags, the
// descriptions from the SwaggerDoc() method that k8s.io/api generates for
// every type from its doc comments. Schema names are Kubernetes' own
// ("io.k8s.api.core.v1.Pod"), and each kind's schema carries
// x-kubernetes-group-version-kind, which is how kubectl finds it.

// schemaRef is how Kubernetes' v3 documents point at another schema.
const schemaRef = "#/components/schemas/"

// leafSchemas are types whose JSON is not their Go shape. Kubernetes
// publishes them as named schemas too, so fields show e.g. <Quantity>.
var leafSchemas = map[reflect.Type]map[string]any{
	reflect.TypeFor[metav1.Time]():          {"type": "string", "format": "date-time", "description": "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON."},
	reflect.TypeFor[metav1.MicroTime]():     {"type": "string", "format": "date-time", "description": "MicroTime is version of Time with microsecond level precision."},
	reflect.TypeFor[metav1.Duration]():      {"type": "string", "description": "Duration is a wrapper around time.Duration which supports correct marshaling to YAML and JSON."},
	reflect.TypeFor[resource.Quantity]():    {"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}, "description": "Quantity is a fixed-point representation of a number, e.g. 100m, 1.5Gi or 2."},
	reflect.TypeFor[intstr.IntOrString]():   {"x-kubernetes-int-or-string": true, "description": "IntOrString is a type that can hold an int32 or a string."},
	reflect.TypeFor[runtime.RawExtension](): {"type": "object", "description": "RawExtension holds an embedded object of any kind."},
	reflect.TypeFor[metav1.FieldsV1]():      {"type": "object", "description": "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format."},
}

// leafSchemasV2 are the leaf schemas Swagger 2.0 cannot say as v3 does
// (it has no oneOf, and int-or-string is a format there): /openapi/v2
// publishes Kubernetes' v2 forms of them instead.
var leafSchemasV2 = map[string]map[string]any{
	schemaName(reflect.TypeFor[resource.Quantity]()): {"type": "string", "description": leafSchemas[reflect.TypeFor[resource.Quantity]()]["description"]},
	schemaName(reflect.TypeFor[intstr.IntOrString]()): {"type": "string", "format": "int-or-string",
		"description": leafSchemas[reflect.TypeFor[intstr.IntOrString]()]["description"]},
}

// schemaSet collects the schemas reachable from some kinds.
type schemaSet map[string]map[string]any

// addKind adds obj's type and everything it refers to, marking it as gvk.
func (s schemaSet) addKind(obj runtime.Object, gvk schema.GroupVersionKind) {
	t := reflect.TypeOf(obj).Elem()
	s.add(t)
	s[schemaName(t)]["x-kubernetes-group-version-kind"] = []map[string]string{
		{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}}
}

// add builds the schema of struct type t (once) and returns its name.
func (s schemaSet) add(t reflect.Type) string {
	name := schemaName(t)
	if _, done := s[name]; done {
		return name
	}
	if leaf, ok := leafSchemas[t]; ok {
		s[name] = leaf
		return name
	}
	out := map[string]any{"type": "object"}
	s[name] = out // before the fields: types refer to themselves (JSONSchemaProps-like)
	docs := swaggerDoc(t)
	if d := docs[""]; d != "" {
		out["description"] = d
	}
	props := map[string]any{}
	var required []string
	s.fields(t, props, &required)
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(required) > 0 {
		sort.Strings(required)
		out["required"] = required
	}
	return name
}

// fields adds the JSON properties of struct t, flattening inlined structs.
// A field without omitempty is required, the rule Kubernetes' openapi-gen
// follows (it also honours +optional comments, which reflection cannot see).
func (s schemaSet) fields(t reflect.Type, props map[string]any, required *[]string) {
	docs := swaggerDoc(t)
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) && f.Type.Kind() == reflect.Struct {
			s.fields(f.Type, props, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := s.property(f.Type)
		if d := docs[name]; d != "" {
			p["description"] = d
		}
		props[name] = p
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
}

// property is the schema of a field of type t: inline for scalars, a
// reference (wrapped in allOf, so that it can carry its own description,
// as Kubernetes writes it) for structs.
func (s schemaSet) property(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return map[string]any{"allOf": []any{map[string]any{"$ref": schemaRef + s.add(t)}}}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": s.property(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": s.property(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int32, reflect.Uint32, reflect.Int16, reflect.Uint16, reflect.Int8, reflect.Uint8:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	default: // interfaces
		return map[string]any{"type": "object"}
	}
}

// schemaName is Kubernetes' name for a Go type: its package path with the
// domain reversed, then the type name ("k8s.io/api/core/v1".Pod →
// "io.k8s.api.core.v1.Pod").
func schemaName(t reflect.Type) string {
	pkg := t.PkgPath()
	domain, rest, _ := strings.Cut(pkg, "/")
	parts := strings.Split(domain, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	name := strings.Join(parts, ".")
	if rest != "" {
		name += "." + strings.ReplaceAll(rest, "/", ".")
	}
	return name + "." + t.Name()
}

// swaggerDoc returns the field descriptions k8s.io/api generates for t
// ("" describes the type itself), or nil.
func swaggerDoc(t reflect.Type) map[string]string {
	type documented interface{ SwaggerDoc() map[string]string }
	if d, ok := reflect.Zero(t).Interface().(documented); ok {
		return d.SwaggerDoc()
	}
	if d, ok := reflect.New(t).Interface().(documented); ok {
		return d.SwaggerDoc()
	}
	return nil
}
