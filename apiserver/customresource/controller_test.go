package customresource_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mkube/mkube/apiserver/customresource"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/store"
)

func widgetsCRD(name, plural, kind string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + name + `"},
	"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"` + plural + `","singular":"` + strings.TrimSuffix(plural, "s") + `","kind":"` + kind + `"},
	"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":` + customresource.WidgetSchema + `}}]}}`
}

// A definition is served once it is Established, refused when its names
// are taken, and takes its objects with it when it goes.
func TestTheControllerServesEstablishesAndCleansUp(t *testing.T) {
	s := testserver.StartServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	var refused metav1.Status
	if code := s.Do(http.MethodPost, crds, "application/json", widgetsCRD("widgets", "widgets", "Widget"), &refused); code != http.StatusUnprocessableEntity ||
		!strings.Contains(refused.Message, `metadata.name: Invalid value: "widgets": must be spec.names.plural+"."+spec.group`) {
		t.Fatalf("a definition misnamed: %d %q", code, refused.Message)
	}
	if code := s.Do(http.MethodPost, crds, "application/json", widgetsCRD("widgets.example.com", "widgets", "Widget"), nil); code != http.StatusCreated {
		t.Fatalf("create the definition: %d", code)
	}
	condition := func(name string, t apiextensionsv1.CustomResourceDefinitionConditionType) func() (bool, string) {
		return func() (bool, string) {
			var crd apiextensionsv1.CustomResourceDefinition
			s.Do(http.MethodGet, crds+"/"+name, "", "", &crd)
			for _, c := range crd.Status.Conditions {
				if c.Type == t {
					return c.Status == apiextensionsv1.ConditionTrue, c.Reason + ": " + c.Message
				}
			}
			return false, "no condition"
		}
	}
	testserver.Eventually(t, "widgets are Established", condition("widgets.example.com", apiextensionsv1.Established))

	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	var w unstructured.Unstructured
	if code := s.Do(http.MethodPost, widgets, "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"colour":"red"}}`, &w); code != http.StatusCreated {
		t.Fatalf("create a widget: %d", code)
	}
	if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 || w.GetGeneration() != 1 {
		t.Fatalf("the created widget: size %d, generation %d", size, w.GetGeneration())
	}
	var st metav1.Status
	if code := s.Do(http.MethodPost, widgets, "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"bad"},"spec":{"size":0}}`, &st); code != http.StatusUnprocessableEntity ||
		st.Message != `Widget.example.com "bad" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1` {
		t.Fatalf("an invalid widget: %d %q", code, st.Message)
	}

	// gadgets.example.com wants the kind Widget, which widgets have.
	if code := s.Do(http.MethodPost, crds, "application/json", widgetsCRD("gadgets.example.com", "gadgets", "Widget"), nil); code != http.StatusCreated {
		t.Fatalf("create the second definition: %d", code)
	}
	testserver.Eventually(t, "gadgets are refused the kind Widget", func() (bool, string) {
		ok, why := condition("gadgets.example.com", apiextensionsv1.NamesAccepted)()
		return !ok && why == `NameConflict: "Widget" is already in use`, why
	})
	if code := s.Do(http.MethodGet, "/apis/example.com/v1/namespaces/default/gadgets", "", "", nil); code != http.StatusNotFound {
		t.Fatalf("gadgets are served: %d", code)
	}

	// Deleting the definition deletes the widget, then the definition; a
	// watch of widgets sees the deletion and then ends, as the kind does.
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	req, _ := http.NewRequestWithContext(wctx, http.MethodGet, s.URL+widgets+"?watch=1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if code := s.Do(http.MethodDelete, crds+"/widgets.example.com", "", "", nil); code != http.StatusOK {
		t.Fatalf("delete the definition: %d", code)
	}
	testserver.Eventually(t, "the definition and its kind are gone", func() (bool, string) {
		crd, list := s.Do(http.MethodGet, crds+"/widgets.example.com", "", "", nil), s.Do(http.MethodGet, widgets, "", "", nil)
		return crd == http.StatusNotFound && list == http.StatusNotFound, http.StatusText(crd) + ", " + http.StatusText(list)
	})
	events, err := io.ReadAll(resp.Body) // returns when the server ends the watch
	if err != nil || wctx.Err() != nil || !strings.Contains(string(events), `"type":"DELETED"`) {
		t.Fatalf("the watch of widgets: %v %v\n%s", err, wctx.Err(), events)
	}
	if kvs, err := s.Store.List(context.Background(), store.Prefix("example.com/widgets", ""), store.ListOptions{}); err != nil || len(kvs.KVs) != 0 {
		t.Fatalf("etcd still holds %d widgets (%v)", len(kvs.KVs), err)
	}
}
