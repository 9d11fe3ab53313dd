package customresource_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/internal/testserver"
)

// crontabsCRD is Kubernetes' CronTab example with subresources.scale;
// the schema keeps unknown fields so that a test can store a replicas
// field of the wrong type.
func crontabsCRD(scope string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},
	"spec":{"group":"stable.example.com","scope":"` + scope + `","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab"},
	"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},
	"subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.labelSelector"}}}]}}`
}

func serveCronTabs(t *testing.T, s *testserver.Server, scope, crontabs string) {
	t.Helper()
	if code := s.Do(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", crontabsCRD(scope), nil); code != http.StatusCreated {
		t.Fatalf("create the definition: %d", code)
	}
	testserver.Eventually(t, "crontabs are served", func() (bool, string) {
		code := s.Do(http.MethodGet, crontabs, "", "", nil)
		return code == http.StatusOK, http.StatusText(code)
	})
}

// A CronTab's scale is an autoscaling/v1 Scale read from the paths the
// definition names; a write changes spec.replicas only, with
// resourceVersion as its precondition, in every patch format Kubernetes
// takes for a custom resource.
func TestTheScaleOfACustomResource(t *testing.T) {
	s := testserver.StartServer(t)
	const crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	serveCronTabs(t, s, "Namespaced", crontabs)
	var cr unstructured.Unstructured
	if code := s.Do(http.MethodPost, crontabs, "application/json",
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x"},"spec":{"replicas":1,"cronSpec":"* * * * */5"}}`, &cr); code != http.StatusCreated {
		t.Fatalf("create a CronTab: %d", code)
	}
	cr.Object["status"] = map[string]any{"replicas": int64(1), "labelSelector": "app=cron"}
	body, _ := cr.MarshalJSON()
	if code := s.Do(http.MethodPut, crontabs+"/x/status", "application/json", string(body), &cr); code != http.StatusOK {
		t.Fatalf("write the status: %d", code)
	}

	var scale autoscalingv1.Scale
	if code := s.Do(http.MethodGet, crontabs+"/x/scale", "", "", &scale); code != http.StatusOK {
		t.Fatalf("GET scale: %d", code)
	}
	if scale.APIVersion != "autoscaling/v1" || scale.Kind != "Scale" || scale.Name != "x" || scale.Namespace != "default" || scale.UID != cr.GetUID() ||
		scale.ResourceVersion != cr.GetResourceVersion() || scale.Spec.Replicas != 1 || scale.Status.Replicas != 1 || scale.Status.Selector != "app=cron" {
		t.Fatalf("GET scale: %+v", scale)
	}

	// As a Table (kubectl get --subresource=scale): desired and available.
	req, _ := http.NewRequest(http.MethodGet, s.URL+crontabs+"/x/scale", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	var table metav1.Table
	if code := s.DoRequest(req, &table); code != http.StatusOK || len(table.ColumnDefinitions) != 3 || table.ColumnDefinitions[1].Name != "Desired" ||
		table.ColumnDefinitions[2].Name != "Available" || len(table.Rows) != 1 || fmt.Sprint(table.Rows[0].Cells) != "[x 1 1]" {
		t.Errorf("the scale as a Table: %d %+v", code, table)
	}

	// A PUT whose status says otherwise changes only the spec.
	put := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"x","resourceVersion":"` + scale.ResourceVersion +
		`"},"spec":{"replicas":3},"status":{"replicas":7,"selector":"app=other"}}`
	if code := s.Do(http.MethodPut, crontabs+"/x/scale", "application/json", put, &scale); code != http.StatusOK {
		t.Fatalf("PUT scale: %d", code)
	}
	if scale.Spec.Replicas != 3 || scale.Status.Replicas != 1 || scale.Status.Selector != "app=cron" {
		t.Errorf("PUT scale answered %+v, want 3 wanted, the stored status", scale.Spec)
	}
	s.Do(http.MethodGet, crontabs+"/x", "", "", &cr)
	if r, _, _ := unstructured.NestedInt64(cr.Object, "spec", "replicas"); r != 3 || cr.GetGeneration() != 2 {
		t.Errorf("after the PUT: spec.replicas %d generation %d, want 3 and 2", r, cr.GetGeneration())
	}
	if cron, _, _ := unstructured.NestedString(cr.Object, "spec", "cronSpec"); cron != "* * * * */5" {
		t.Errorf("the rest of the spec changed: cronSpec %q", cron)
	}
	if r, _, _ := unstructured.NestedInt64(cr.Object, "status", "replicas"); r != 1 {
		t.Errorf("the status changed: status.replicas %d", r)
	}

	// The same PUT again is stale.
	var st metav1.Status
	if code := s.Do(http.MethodPut, crontabs+"/x/scale", "application/json", put, &st); code != http.StatusConflict ||
		st.Message != `Operation cannot be fulfilled on crontabs.stable.example.com "x": the object has been modified; please apply your changes to the latest version and try again` {
		t.Errorf("a stale PUT: %d %q", code, st.Message)
	}

	patches := []struct{ name, contentType, body string }{
		{"merge", "application/merge-patch+json", `{"spec":{"replicas":4}}`},
		{"json", "application/json-patch+json", `[{"op":"replace","path":"/spec/replicas","value":5}]`},
		{"apply", "application/apply-patch+yaml", "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: x\nspec:\n  replicas: 6\n"},
	}
	for i, p := range patches {
		path := crontabs + "/x/scale"
		if p.contentType == "application/apply-patch+yaml" {
			path += "?fieldManager=test"
		}
		if code := s.Do(http.MethodPatch, path, p.contentType, p.body, &scale); code != http.StatusOK || scale.Spec.Replicas != int32(4+i) {
			t.Errorf("%s patch: %d, replicas %d, want %d", p.name, code, scale.Spec.Replicas, 4+i)
		}
	}
	if code := s.Do(http.MethodPatch, crontabs+"/x/scale", "application/strategic-merge-patch+json", `{"spec":{"replicas":1}}`, &st); code != http.StatusUnsupportedMediaType ||
		st.Message != "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml" {
		t.Errorf("a strategic merge patch: %d %q, want 415", code, st.Message)
	}
	if code := s.Do(http.MethodPatch, crontabs+"/x/scale", "application/merge-patch+json", `{"spec":{"replicas":-1}}`, &st); code != http.StatusUnprocessableEntity ||
		st.Message != `CronTab.stable.example.com "x" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer` {
		t.Errorf("negative replicas: %d %q", code, st.Message)
	}
}

// A definition's scale paths are where Kubernetes wants them, what they
// hold is checked on every write, and a CronTab
// without spec replicas has no scale to read, in Kubernetes' words.
func TestTheScalePathsOfACustomResource(t *testing.T) {
	s := testserver.StartServer(t)
	var st metav1.Status
	misplaced := strings.Replace(crontabsCRD("Cluster"), `"specReplicasPath":".spec.replicas"`, `"specReplicasPath":".status.replicas"`, 1)
	if code := s.Do(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", misplaced, &st); code != http.StatusUnprocessableEntity ||
		!strings.Contains(st.Message, `spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec`) {
		t.Errorf("a definition whose spec replicas are in the status: %d %q", code, st.Message)
	}
	const crontabs = "/apis/stable.example.com/v1/crontabs"
	serveCronTabs(t, s, "Cluster", crontabs)
	if code := s.Do(http.MethodPost, crontabs, "application/json",
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"bad"},"spec":{"replicas":"three"}}`, &st); code != http.StatusUnprocessableEntity ||
		st.Message != `CronTab.stable.example.com "bad" is invalid: .spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64` {
		t.Errorf("a string spec.replicas: %d %q", code, st.Message)
	}
	if code := s.Do(http.MethodPost, crontabs, "application/json",
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x"},"spec":{"cronSpec":"* * * * */5"}}`, nil); code != http.StatusCreated {
		t.Fatalf("create a CronTab without replicas: %d", code)
	}
	if code := s.Do(http.MethodGet, crontabs+"/x/scale", "", "", &st); code != http.StatusInternalServerError ||
		st.Message != `Internal error occurred: the spec replicas field ".spec.replicas" does not exist` {
		t.Errorf("GET the scale without spec replicas: %d %q", code, st.Message)
	}
	if code := s.Do(http.MethodPatch, crontabs+"/x/scale", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}}}`, &st); code != http.StatusBadRequest ||
		st.Message != `the spec replicas field ".spec.replicas" cannot be empty` {
		t.Errorf("a patch that sets no replicas: %d %q", code, st.Message)
	}
	var scale autoscalingv1.Scale
	if code := s.Do(http.MethodPatch, crontabs+"/x/scale", "application/merge-patch+json", `{"spec":{"replicas":2}}`, &scale); code != http.StatusOK ||
		scale.Spec.Replicas != 2 || scale.Namespace != "" {
		t.Errorf("a patch that sets them: %d %+v", code, scale)
	}
}

// Discovery lists crontabs/scale as autoscaling/v1 Scale (what kubectl
// scale and the HPA controller look for), and RBAC sees the subresource.
func TestTheScaleSubresourceInDiscoveryAndRBAC(t *testing.T) {
	authz := &refuseScale{}
	s := testserver.StartServer(t, func(c *apiserver.Config) { c.Authorizer = authz })
	const crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	serveCronTabs(t, s, "Namespaced", crontabs)
	for _, legacy := range []bool{true, false} {
		d := discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: s.URL})
		d.UseLegacyDiscovery = legacy
		list, err := d.ServerResourcesForGroupVersion("stable.example.com/v1")
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, r := range list.APIResources {
			if r.Name == "crontabs/scale" {
				found = r.Group == "autoscaling" && r.Version == "v1" && r.Kind == "Scale" && r.Namespaced &&
					strings.Join(r.Verbs, ",") == "get,patch,update"
			}
		}
		if !found {
			t.Errorf("legacy %v: no crontabs/scale as autoscaling/v1 Scale with get, patch, update in %+v", legacy, list.APIResources)
		}
	}
	var st metav1.Status
	if code := s.Do(http.MethodGet, crontabs+"/x/scale", "", "", &st); code != http.StatusForbidden ||
		st.Message != `crontabs.stable.example.com "x" is forbidden: User "system:unsecured" cannot get resource "crontabs/scale" in API group "stable.example.com" in the namespace "default"` {
		t.Errorf("GET scale refused: %d %q", code, st.Message)
	}
}

// refuseScale allows everything but the scale subresource.
type refuseScale struct{}

func (refuseScale) Authorize(_ context.Context, a authorization.Attributes) (authorization.Decision, string, error) {
	if a.Subresource == "scale" {
		return authorization.NoOpinion, "", nil
	}
	return authorization.Allow, "", nil
}
