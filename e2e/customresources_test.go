package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// A CustomResourceDefinition of Widgets: a schema with a default, an enum
// and a minimum, a status subresource, a short name and printer columns.
const widgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      additionalPrinterColumns:
        - {name: Colour, type: string, jsonPath: .spec.colour}
        - {name: Size, type: integer, jsonPath: .spec.size}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                colour: {type: string, enum: [red, blue], description: The widget's colour.}
                size: {type: integer, minimum: 1, default: 3}
            status:
              type: object
              properties:
                ready: {type: boolean}
`

// Custom resources (issue "Conformance"): a definition becomes a kind
// kubectl gets, describes, explains, patches and watches like a built-in
// one; its schema defaults, prunes and validates; deleting the definition
// deletes its objects and stops serving the kind.
func TestCustomResourceDefinitionsServeTheirKinds(t *testing.T) {
	c := startCluster(t, nil)
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "widgets.yaml", widgetsCRD))
	k.mustKubectl(t, "wait", "--for", "condition=Established", "crd/widgets.example.com", "--timeout", "20s")

	// Defaulting: size 3, which the table shows in its own column.
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "w1.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {colour: red}\n"))
	if row := parseTable(t, k.mustKubectl(t, "get", "wd", "w1")).rows[0]; row["COLOUR"] != "red" || row["SIZE"] != "3" {
		t.Fatalf("kubectl get wd w1: %v", row)
	}

	// Validation, in Kubernetes' words, and pruning: kubectl asks for
	// strict field validation, so an unknown field is refused.
	_, errOut, code := k.kubectl(t, "apply", "-f", k.manifest(t, "w2.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2}\nspec: {colour: green, size: 0}\n"))
	for _, want := range []string{`The Widget "w2" is invalid`, `spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`,
		`spec.colour: Unsupported value: "green": supported values: "red", "blue"`} {
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("an invalid widget: exit %d, %s\nwant %s", code, errOut, want)
		}
	}
	w3 := k.manifest(t, "w3.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w3}\nspec: {colour: blue, shape: round}\n")
	if _, errOut, code := k.kubectl(t, "apply", "-f", w3); code == 0 || !strings.Contains(errOut, `unknown field "spec.shape"`) {
		t.Errorf("a widget with an unknown field: exit %d, %s", code, errOut)
	}
	if out, _, code := k.kubectl(t, "create", "--validate=false", "-f", w3); code != 0 || !strings.Contains(out, "created") {
		t.Errorf("without validation the widget is created, pruned: %s", out)
	} else if got := k.mustKubectl(t, "get", "wd", "w3", "-o", "jsonpath={.spec}"); got != `{"colour":"blue","size":3}` {
		t.Errorf("the pruned widget's spec: %s", got)
	}

	// The status subresource: status is written there only, and only spec
	// changes count as generations.
	k.mustKubectl(t, "patch", "wd", "w1", "--subresource", "status", "--type", "merge", "-p", `{"status":{"ready":true}}`)
	k.mustKubectl(t, "patch", "wd", "w1", "--type", "merge", "-p", `{"status":{"ready":false},"spec":{"size":5}}`)
	if got := k.mustKubectl(t, "get", "wd", "w1", "-o", "jsonpath={.status.ready} {.spec.size} {.metadata.generation}"); got != "true 5 2" {
		t.Errorf("status ready, size, generation: %q, want \"true 5 2\"", got)
	}
	if out := k.mustKubectl(t, "explain", "widget.spec.colour"); !strings.Contains(out, "The widget's colour.") {
		t.Errorf("kubectl explain widget.spec.colour:\n%s", out)
	}

	// A second definition claiming the kind Widget in the group is not
	// served, and says why.
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "gadgets.yaml", strings.NewReplacer("widgets.example.com", "gadgets.example.com",
		"plural: widgets, singular: widget", "plural: gadgets, singular: gadget", "shortNames: [wd]", "shortNames: [gd]").Replace(widgetsCRD)))
	testserver.EventuallyWithin(t, 10*time.Second, "gadgets.example.com is refused its names", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "crd", "gadgets.example.com", "-o", `jsonpath={.status.conditions[?(@.type=="NamesAccepted")].reason}: {.status.conditions[?(@.type=="NamesAccepted")].message}`)
		return out == `NameConflict: "Widget" is already in use`, out
	})

	// Deleting the definition deletes the widgets, and the kind goes (a
	// 404, or, once kubectl's discovery cache knows, no such type).
	k.mustKubectl(t, "delete", "crd", "widgets.example.com", "--timeout", "30s")
	_, errOut, code = k.kubectl(t, "get", "widgets")
	if code == 0 || !strings.Contains(errOut, "could not find the requested resource") && !strings.Contains(errOut, `doesn't have a resource type "widgets"`) {
		t.Errorf("kubectl get widgets after the definition is gone: exit %d, %s", code, errOut)
	}
}
