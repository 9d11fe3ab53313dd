package customresource

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// widgetSchema: spec.colour an enum, spec.size an integer ≥ 1 that
// defaults to 3, spec.labels a map, status.ready.
const widgetSchema = `{"type":"object","properties":{
  "spec":{"type":"object","properties":{
    "colour":{"type":"string","enum":["red","blue"]},
    "size":{"type":"integer","minimum":1,"default":3},
    "labels":{"type":"object","additionalProperties":{"type":"string"}}}},
  "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`

// WidgetSchema is widgetSchema for the tests outside the package, which
// run the controller in a whole API server (internal/testserver).
const WidgetSchema = widgetSchema

func widgetVersion(t *testing.T, raw string) *versionSchema {
	t.Helper()
	props := &apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal([]byte(raw), props); err != nil {
		t.Fatal(err)
	}
	vs, err := newVersionSchema(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
		&apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: props})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// What a body becomes on its way in: decoded and pruned (the dropped
// fields named for field validation), defaulted, then validated.
func TestABodyIsPrunedDefaultedAndValidatedByTheSchema(t *testing.T) {
	vs := widgetVersion(t, widgetSchema)
	tests := []struct {
		name, body string
		wantSpec   string   // spec after decode and defaulting
		problems   []string // for ?fieldValidation
		invalid    []string // validation errors, by their text
		decodeErr  string
	}{
		{name: "a valid widget gets its default size",
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"colour":"red"}}`, wantSpec: `{"colour":"red","size":3}`},
		{name: "a body without apiVersion and kind is the URL's kind",
			body: `{"metadata":{"name":"w"},"spec":{"colour":"blue","size":2}}`, wantSpec: `{"colour":"blue","size":2}`},
		{name: "YAML too", body: "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {colour: red}\n", wantSpec: `{"colour":"red","size":3}`},
		{name: "unknown fields are dropped and named, in metadata too",
			body:     `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","colour":"x"},"spec":{"colour":"red","shape":"round"},"extra":1}`,
			wantSpec: `{"colour":"red","size":3}`, problems: []string{`unknown field "metadata.colour"`, `unknown field "extra"`, `unknown field "spec.shape"`}},
		{name: "a key given twice is a problem, the last one counts",
			body:     `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"colour":"red","colour":"blue"}}`,
			wantSpec: `{"colour":"blue","size":3}`, problems: []string{`duplicate field "spec.colour"`}},
		{name: "values outside the schema are invalid, in Kubernetes' words",
			body:     `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"colour":"green","size":0,"labels":{"a":1}}}`,
			wantSpec: `{"colour":"green","labels":{"a":1},"size":0}`,
			invalid: []string{`spec.colour: Unsupported value: "green": supported values: "red", "blue"`,
				`spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"`,
				`spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`}},
		{name: "another kind is refused", body: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"w"}}`,
			decodeErr: `the kind in the data (Gadget) does not match the expected kind (Widget)`},
		{name: "another version is refused", body: `{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"w"}}`,
			decodeErr: `the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)`},
		{name: "not an object", body: `[1,2]`, decodeErr: "error decoding JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, problems, err := vs.decode([]byte(tc.body))
			if tc.decodeErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.decodeErr) {
					t.Fatalf("decode: %v, want %s", err, tc.decodeErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(problems, "|") != strings.Join(tc.problems, "|") {
				t.Errorf("problems %q, want %q", problems, tc.problems)
			}
			vs.applyDefaults(u)
			if spec, _ := json.Marshal(u.Object["spec"]); string(spec) != tc.wantSpec {
				t.Errorf("spec %s, want %s", spec, tc.wantSpec)
			}
			var got []string
			for _, e := range vs.validate(u, nil) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "|") != strings.Join(tc.invalid, "|") {
				t.Errorf("validation:\n got %q\nwant %q", got, tc.invalid)
			}
		})
	}
}

// A schema that keeps unknown fields at its root prunes nothing.
func TestPreserveUnknownFieldsKeepsEverything(t *testing.T) {
	vs := widgetVersion(t, `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`)
	u, problems, err := vs.decode([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"a":{"b":[{"c":"d"}]}}`))
	if err != nil || len(problems) != 0 {
		t.Fatalf("decode: %v %v", problems, err)
	}
	if a, _ := json.Marshal(u.Object["a"]); string(a) != `{"b":[{"c":"d"}]}` {
		t.Errorf("a = %s", a)
	}
}

func TestDefinitionNamesAreTheGroupReversed(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "stable.example.com",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "CronTab"}}}
	if got := definitionName(crd, "v1"); got != "com.example.stable.v1.CronTab" {
		t.Errorf("got %s", got)
	}
}
