package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"regexp"
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
	t.Parallel()
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

// A definition whose versions convert through a webhook, as the
// CustomResourceConversionWebhook conformance specs deploy it: agnhost's
// crd-conversion-webhook in a pod, behind a Service, its certificate from
// a Secret. A v1 object (hostPort) reads at v2 as host and port; after
// the storage version becomes v2, a list at either version holds both
// objects, each converted; with the webhook gone, reads at the other
// version fail in Kubernetes' words.
func TestACustomResourceConvertsThroughItsWebhook(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	ca, cert, key := webhookCertificates(t, "e2e-test-crd-conversion-webhook.default.svc")
	k.mustKubectl(t, "create", "secret", "generic", "webhook-certs", "--from-file=tls.crt="+k.manifest(t, "tls.crt", cert),
		"--from-file=tls.key="+k.manifest(t, "tls.key", key))
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "converter.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: sample-crd-conversion-webhook
  labels:
    crd-webhook: "true"
spec:
  containers:
  - name: sample-crd-conversion-webhook
    image: registry.k8s.io/e2e-test-images/agnhost:2.66.1
    args: ["crd-conversion-webhook", "--tls-cert-file=/certs/tls.crt", "--tls-private-key-file=/certs/tls.key", "-v=4", "--port=9444"]
    ports:
    - containerPort: 9444
    readinessProbe:
      httpGet: {scheme: HTTPS, port: 9444, path: /readyz}
      periodSeconds: 1
    volumeMounts:
    - {name: certs, mountPath: /certs, readOnly: true}
  volumes:
  - name: certs
    secret: {secretName: webhook-certs}
---
apiVersion: v1
kind: Service
metadata:
  name: e2e-test-crd-conversion-webhook
spec:
  selector:
    crd-webhook: "true"
  ports:
  - port: 9443
    targetPort: 9444
`))
	k.mustKubectl(t, "wait", "--for=condition=Ready", "pod/sample-crd-conversion-webhook", "--timeout=60s")
	crd := func(storage string) string {
		return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: e2e-test-crds.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: e2e-test-crds, singular: e2e-test-crd, kind: E2eTestCrd, listKind: E2eTestCrdList}
  versions:
  - name: v1
    served: true
    storage: %t
    schema:
      openAPIV3Schema:
        type: object
        properties:
          hostPort: {type: string}
  - name: v2
    served: true
    storage: %t
    schema:
      openAPIV3Schema:
        type: object
        properties:
          host: {type: string}
          port: {type: string}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: ["v1", "v1beta1"]
      clientConfig:
        caBundle: %s
        service: {namespace: default, name: e2e-test-crd-conversion-webhook, path: /crdconvert, port: 9443}
`, storage == "v1", storage == "v2", base64.StdEncoding.EncodeToString([]byte(ca)))
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "crd-v1.yaml", crd("v1")))
	k.mustKubectl(t, "wait", "--for", "condition=Established", "crd/e2e-test-crds.stable.example.com", "--timeout", "20s")
	object := func(name, hostPort string) string {
		return k.manifest(t, name+".yaml", "apiVersion: stable.example.com/v1\nkind: E2eTestCrd\nmetadata: {name: "+name+"}\nhostPort: \""+hostPort+"\"\n")
	}
	k.mustKubectl(t, "create", "-f", object("cr-instance-1", "localhost:8080"))
	if got := k.mustKubectl(t, "get", "e2e-test-crds.v2.stable.example.com", "cr-instance-1", "-o", "jsonpath={.apiVersion} {.host} {.port} {.hostPort}"); got != "stable.example.com/v2 localhost 8080 " {
		t.Fatalf("cr-instance-1 at v2: %q", got)
	}

	// The storage version becomes v2: once the API server serves the
	// definition's second generation (its log says so), cr-instance-2,
	// created at v1, is stored at v2.
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "crd-v2.yaml", crd("v2")))
	testserver.EventuallyWithin(t, 20*time.Second, "the API server serves generation 2", func() (bool, string) {
		log, _ := os.ReadFile(c.logs["apiserver"])
		return regexp.MustCompile(`msg="serving custom resources".* crd=e2e-test-crds.stable.example.com .*generation=2`).Match(log), "not in its log"
	})
	k.mustKubectl(t, "create", "-f", object("cr-instance-2", "example.com:80"))
	for _, tc := range []struct{ version, fields, want string }{
		{"v1", "{range .items[*]}{.metadata.name}={.hostPort} {end}", "cr-instance-1=localhost:8080 cr-instance-2=example.com:80 "},
		{"v2", "{range .items[*]}{.metadata.name}={.host}/{.port} {end}", "cr-instance-1=localhost/8080 cr-instance-2=example.com/80 "},
	} {
		if got := k.mustKubectl(t, "get", "e2e-test-crds."+tc.version+".stable.example.com", "-o", "jsonpath="+tc.fields); got != tc.want {
			t.Errorf("the list at %s: %q, want %q", tc.version, got, tc.want)
		}
	}

	// Without the webhook, an object stored at v2 does not read at v1.
	k.mustKubectl(t, "delete", "pod", "sample-crd-conversion-webhook", "--grace-period=0", "--force")
	testserver.EventuallyWithin(t, 20*time.Second, "a read at v1 fails", func() (bool, string) {
		_, errOut, code := k.kubectl(t, "get", "e2e-test-crds.v1.stable.example.com", "cr-instance-2")
		return code != 0 && strings.Contains(errOut, "Internal error occurred: conversion webhook for stable.example.com/v2, Kind=E2eTestCrd failed: "), errOut
	})
	if got := k.mustKubectl(t, "get", "e2e-test-crds.v2.stable.example.com", "cr-instance-2", "-o", "jsonpath={.host}"); got != "example.com" {
		t.Errorf("at its storage version it still reads: %q", got)
	}
	if _, errOut, code := k.kubectl(t, "get", "e2e-test-crds.v2.stable.example.com", "cr-instance-1"); code == 0 ||
		!strings.Contains(errOut, "conversion webhook for stable.example.com/v1, Kind=E2eTestCrd failed: ") {
		t.Errorf("cr-instance-1, stored at v1, read at v2 without the webhook: exit %d, %s", code, errOut)
	}
}
