package customresource

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"

	"github.com/mkube/mkube/apiserver"
)

// publishedSchemas is a version's kind as kube-apiserver publishes it in
// /openapi/v3 (for kubectl explain and kubectl's validation) and
// /openapi/v2, built by Kubernetes' own builder: the structural schema
// with apiVersion, kind and a reference to ObjectMeta added, and in v2
// the rules v2 cannot say taken out (a kind that keeps unknown fields is
// only "an object" there).
func publishedSchemas(crd *apiextensionsv1.CustomResourceDefinition, version string) (*apiserver.Schema, error) {
	v3, err := builder.BuildOpenAPIV3(crd, version, builder.Options{IncludeSelectableFields: true})
	if err != nil {
		return nil, fmt.Errorf("OpenAPI v3 schema: %w", err)
	}
	v2, err := builder.BuildOpenAPIV2(crd, version, builder.Options{V2: true, IncludeSelectableFields: true})
	if err != nil {
		return nil, fmt.Errorf("OpenAPI v2 schema: %w", err)
	}
	name := definitionName(crd, version)
	out := &apiserver.Schema{Name: name, Revision: crd.ResourceVersion}
	if s, ok := v3.Components.Schemas[name]; ok {
		if out.Schema, err = asMap(s); err != nil {
			return nil, err
		}
	}
	if s, ok := v2.Definitions[name]; ok {
		if out.V2, err = asMap(s); err != nil {
			return nil, err
		}
	}
	if out.Schema == nil || out.V2 == nil {
		return nil, fmt.Errorf("the OpenAPI builder published no schema %s", name)
	}
	return out, nil
}

// definitionName is the name Kubernetes publishes a custom kind's schema
// under: the group's labels reversed, then version and kind
// (com.example.v1.Widget for widgets.example.com).
func definitionName(crd *apiextensionsv1.CustomResourceDefinition, version string) string {
	labels := strings.Split(crd.Spec.Group, ".")
	name := ""
	for i := len(labels) - 1; i >= 0; i-- {
		name += labels[i] + "."
	}
	return name + version + "." + crd.Spec.Names.Kind
}

// asMap is a schema as the JSON map the server's documents are made of.
func asMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}
