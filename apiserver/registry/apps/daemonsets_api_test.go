package apps_test

import (
	"net/http"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// The template generation and metadata.generation of a DaemonSet are kept
// by the server, over HTTP, as a client sees them.
func TestTheServerCountsTemplateGenerationsAndSpecGenerations(t *testing.T) {
	s := testserver.StartServer(t)
	const path = "/apis/apps/v1/namespaces/default/daemonsets"
	body := `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","annotations":{"deprecated.daemonset.template.generation":"0"}},
		"spec":{"selector":{"matchLabels":{"app":"agent"}},"template":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"name":"a","image":"agent:1"}]}}}}`
	var ds appsv1.DaemonSet
	if code := s.Do("POST", path, "application/json", body, &ds); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	check := func(step string, gen int64, tmplGen string) {
		t.Helper()
		if ds.Generation != gen || ds.Annotations[appsv1.DeprecatedTemplateGeneration] != tmplGen {
			t.Errorf("%s: generation %d, template generation %q; want %d and %q", step, ds.Generation, ds.Annotations[appsv1.DeprecatedTemplateGeneration], gen, tmplGen)
		}
	}
	check("created", 1, "1")
	patch := func(step, p string, subresource string) {
		t.Helper()
		if code := s.Do("PATCH", path+"/agent"+subresource, "application/merge-patch+json", p, &ds); code != http.StatusOK {
			t.Fatalf("%s: %d", step, code)
		}
	}
	patch("image", `{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"agent:2"}]}}}}`, "")
	check("a new template", 2, "2")
	patch("history limit", `{"spec":{"revisionHistoryLimit":3}}`, "")
	check("a spec change outside the template", 3, "2")
	patch("client's generation", `{"metadata":{"annotations":{"deprecated.daemonset.template.generation":"9"}}}`, "")
	check("the client may not set the template generation", 3, "2")
	patch("status", `{"status":{"numberReady":1,"observedGeneration":3}}`, "/status")
	check("a status write", 3, "2")
	if ds.Status.NumberReady != 1 {
		t.Errorf("status write lost: %+v", ds.Status)
	}
}
