package apiserver

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSchemaNamesAreKubernetesOwn(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[corev1.Pod](), "io.k8s.api.core.v1.Pod"},
		{reflect.TypeFor[appsv1.DeploymentSpec](), "io.k8s.api.apps.v1.DeploymentSpec"},
		{reflect.TypeFor[metav1.ObjectMeta](), "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
		{reflect.TypeFor[resource.Quantity](), "io.k8s.apimachinery.pkg.api.resource.Quantity"},
	} {
		if got := schemaName(tc.typ); got != tc.want {
			t.Errorf("schemaName(%v) = %q, want %q", tc.typ, got, tc.want)
		}
	}
}

func TestPodSchemaHasFieldsTypesDescriptionsAndItsKind(t *testing.T) {
	set := schemaSet{}
	set.addKind(&corev1.Pod{}, corev1.SchemeGroupVersion.WithKind("Pod"))
	pod := set["io.k8s.api.core.v1.Pod"]
	if gvk := pod["x-kubernetes-group-version-kind"]; !reflect.DeepEqual(gvk, []map[string]string{{"group": "", "version": "v1", "kind": "Pod"}}) {
		t.Errorf("Pod's x-kubernetes-group-version-kind = %v", gvk)
	}
	props := pod["properties"].(map[string]any)
	// TypeMeta is inlined: apiVersion and kind are the Pod's own fields.
	for _, f := range []string{"apiVersion", "kind", "metadata", "spec", "status"} {
		if props[f] == nil {
			t.Errorf("Pod has no property %q", f)
		}
	}
	if ref := props["spec"].(map[string]any)["allOf"].([]any)[0].(map[string]any)["$ref"]; ref != schemaRef+"io.k8s.api.core.v1.PodSpec" {
		t.Errorf("Pod.spec refers to %v", ref)
	}

	spec := set["io.k8s.api.core.v1.PodSpec"]
	if req := spec["required"].([]string); !slices.Equal(req, []string{"containers"}) {
		t.Errorf("PodSpec required = %v, want [containers] (every other field is omitempty)", req)
	}
	specProps := spec["properties"].(map[string]any)
	want := map[string]map[string]any{
		"nodeName":                      {"type": "string"},
		"hostNetwork":                   {"type": "boolean"},
		"terminationGracePeriodSeconds": {"type": "integer", "format": "int64"},
		"priority":                      {"type": "integer", "format": "int32"},
	}
	for f, w := range want {
		got := specProps[f].(map[string]any)
		for k, v := range w {
			if got[k] != v {
				t.Errorf("PodSpec.%s %s = %v, want %v", f, k, got[k], v)
			}
		}
		if got["description"] == "" || got["description"] == nil {
			t.Errorf("PodSpec.%s has no description", f)
		}
	}
	if tol := specProps["tolerations"].(map[string]any); tol["type"] != "array" {
		t.Errorf("PodSpec.tolerations = %v, want an array", tol)
	}
	if sel := specProps["nodeSelector"].(map[string]any); sel["type"] != "object" || sel["additionalProperties"].(map[string]any)["type"] != "string" {
		t.Errorf("PodSpec.nodeSelector = %v, want a map of strings", sel)
	}
	// Quantity is a named schema without a type, so kubectl shows <Quantity>.
	if q := set["io.k8s.apimachinery.pkg.api.resource.Quantity"]; q == nil || q["type"] != nil {
		t.Errorf("Quantity schema = %v", q)
	}
	if _, err := json.Marshal(set); err != nil {
		t.Errorf("the schemas do not encode: %v", err)
	}
}
