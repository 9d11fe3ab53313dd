package customresource_test

import (
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/mkube/mkube/apiserver/customresource"
	"github.com/mkube/mkube/internal/testserver"
)

// Aggregated discovery says what the legacy documents say, in one
// answer, as client-go reads it: every group once, with all its versions
// (a definition's two versions included, the preferred first), every
// resource with its subresources, and eviction still in the policy group.
func TestAggregatedDiscoveryAgreesWithTheLegacyDocuments(t *testing.T) {
	s := testserver.StartServer(t)
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
	"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
	"versions":[{"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":` + customresource.WidgetSchema + `}},
	{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":` + customresource.WidgetSchema + `},"subresources":{"status":{}}}]}}`
	if code := s.Do(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", crd, nil); code != http.StatusCreated {
		t.Fatalf("create the definition: %d", code)
	}
	testserver.Eventually(t, "widgets are served", func() (bool, string) {
		code := s.Do(http.MethodGet, "/apis/example.com/v1/widgets", "", "", nil)
		return code == http.StatusOK, http.StatusText(code)
	})

	read := func(legacy bool) ([]*metav1.APIGroup, []*metav1.APIResourceList) {
		d := discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: s.URL})
		d.UseLegacyDiscovery = legacy
		groups, resources, err := d.ServerGroupsAndResources()
		if err != nil {
			t.Fatalf("discovery (legacy %v): %v", legacy, err)
		}
		sort.Slice(resources, func(i, j int) bool { return resources[i].GroupVersion < resources[j].GroupVersion })
		for _, list := range resources {
			list.TypeMeta = metav1.TypeMeta{} // the legacy documents carry a kind, the conversion none
			sort.Slice(list.APIResources, func(i, j int) bool { return list.APIResources[i].Name < list.APIResources[j].Name })
			for i := range list.APIResources {
				// What the two formats cannot differ in: client-go gives a
				// subresource its parent's singular name, and empty lists
				// are absent from the aggregated JSON.
				r := &list.APIResources[i]
				if strings.Contains(r.Name, "/") {
					r.SingularName = ""
				}
				if len(r.ShortNames) == 0 {
					r.ShortNames = nil
				}
				if len(r.Categories) == 0 {
					r.Categories = nil
				}
			}
		}
		return groups, resources
	}
	legacyGroups, legacyResources := read(true)
	groups, resources := read(false)
	if !reflect.DeepEqual(groups, legacyGroups) {
		t.Errorf("groups differ:\naggregated %+v\nlegacy     %+v", groups, legacyGroups)
	}
	if !reflect.DeepEqual(resources, legacyResources) {
		t.Errorf("resources differ:\naggregated %+v\nlegacy     %+v", resources, legacyResources)
	}

	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
		if g.Name == "example.com" {
			if len(g.Versions) != 2 || g.PreferredVersion.Version != "v1" || g.Versions[1].Version != "v1beta1" {
				t.Errorf("example.com: versions %v, preferred %v; want v1 then v1beta1, v1 preferred", g.Versions, g.PreferredVersion)
			}
		}
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) || !slices.Contains(names, "example.com") {
		t.Errorf("groups %v: want each once, example.com among them", names)
	}
	for _, list := range resources {
		for _, r := range list.APIResources {
			if list.GroupVersion == "v1" && r.Name == "pods/eviction" && (r.Group != "policy" || r.Version != "v1" || r.Kind != "Eviction") {
				t.Errorf("pods/eviction is %s/%s %s, want policy/v1 Eviction (kubectl drain evicts only then)", r.Group, r.Version, r.Kind)
			}
		}
	}
	if gv := (schema.GroupVersion{Group: "example.com", Version: "v1"}).String(); !slices.ContainsFunc(resources, func(l *metav1.APIResourceList) bool {
		return l.GroupVersion == gv && slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == "widgets/status" })
	}) {
		t.Errorf("no widgets/status in %s", gv)
	}
}

// The aggregated document has an ETag; a client that already holds it
// gets 304 Not Modified, and one that asks for plain JSON the legacy
// APIGroupList.
func TestAggregatedDiscoveryIsNegotiatedAndCached(t *testing.T) {
	s := testserver.StartServer(t)
	get := func(accept, ifNoneMatch string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/apis", nil)
		req.Header.Set("Accept", accept)
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	first := get(aggregated+",application/json", "")
	if first.StatusCode != http.StatusOK || first.Header.Get("Content-Type") != aggregated || first.Header.Get("ETag") == "" {
		t.Fatalf("aggregated: %d %q etag %q", first.StatusCode, first.Header.Get("Content-Type"), first.Header.Get("ETag"))
	}
	if again := get(aggregated, first.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
		t.Errorf("with its ETag: %d, want 304", again.StatusCode)
	}
	for _, accept := range []string{"application/json", "application/json," + aggregated,
		"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", ""} {
		if legacy := get(accept, ""); legacy.StatusCode != http.StatusOK || legacy.Header.Get("Content-Type") != "application/json" {
			t.Errorf("Accept %q: %d %q, want the legacy document", accept, legacy.StatusCode, legacy.Header.Get("Content-Type"))
		}
	}
}
