package apiserver

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// Discovery is how kubectl learns what this server serves: /api and /apis
// list the group-versions, and each group-version lists its resources with
// their kind, scope, verbs, short names and subresources. kubectl maps
// "po", "deploy" or "pods/eviction" to URLs from these answers, so they are
// generated from the registry rather than written by hand.

// serveAPIVersions answers /api: the legacy core group has only v1.
func (s *Server) serveAPIVersions(w http.ResponseWriter, r *http.Request) {
	if wantsAggregated(r) {
		s.serveAggregated(w, r, true)
		return
	}
	writeJSON(w, http.StatusOK, &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
		},
	})
}

// serveAPIGroups answers /apis: every named group with its versions.
func (s *Server) serveAPIGroups(w http.ResponseWriter, r *http.Request) {
	if wantsAggregated(r) {
		s.serveAggregated(w, r, false)
		return
	}
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, g := range s.groups() {
		if g.name != "" {
			list.Groups = append(list.Groups, g.discovery())
		}
	}
	writeJSON(w, http.StatusOK, list)
}

// serveAPIGroup answers /apis/<group>.
func (s *Server) serveAPIGroup(w http.ResponseWriter, r *http.Request, group string) {
	for _, g := range s.groups() {
		if g.name == group && group != "" {
			d := g.discovery()
			d.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
			writeJSON(w, http.StatusOK, &d)
			return
		}
	}
	writeError(w, notFoundPath(r.URL.Path))
}

// serveResourceList answers /api/v1 and /apis/<group>/<version>.
func (s *Server) serveResourceList(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion) {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
	for _, res := range s.resources() {
		if res.GroupVersion != gv {
			continue
		}
		list.APIResources = append(list.APIResources, discoveryEntries(res)...)
	}
	if len(list.APIResources) == 0 {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// apiGroup is a group and the versions it serves, the preferred first.
type apiGroup struct {
	name     string
	versions []schema.GroupVersion
}

func (g apiGroup) discovery() metav1.APIGroup {
	d := metav1.APIGroup{Name: g.name}
	for _, gv := range g.versions {
		d.Versions = append(d.Versions, metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version})
	}
	d.PreferredVersion = d.Versions[0]
	return d
}

// groups lists every group with at least one resource, the core group
// first, then the others by name. A group's versions are in Kubernetes'
// version priority (v2 > v1 > v1beta2 > v1beta1 > v1alpha1), and the
// first is the preferred one, as for a CustomResourceDefinition's
// versions.
func (s *Server) groups() []apiGroup {
	index := map[string]int{}
	var out []apiGroup
	for _, res := range s.resources() {
		gv := res.GroupVersion
		i, ok := index[gv.Group]
		if !ok {
			i = len(out)
			index[gv.Group] = i
			out = append(out, apiGroup{name: gv.Group})
		}
		if !slices.Contains(out[i].versions, gv) {
			out[i].versions = append(out[i].versions, gv)
		}
	}
	// kube-aggregator lists every APIService's group-version, available
	// or not: a client finds out by asking it.
	for _, a := range s.aggregatedGroupVersions() {
		i, ok := index[a.Group]
		if !ok {
			i = len(out)
			index[a.Group] = i
			out = append(out, apiGroup{name: a.Group})
		}
		if !slices.Contains(out[i].versions, a.GroupVersion) {
			out[i].versions = append(out[i].versions, a.GroupVersion)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].name == "") != (out[j].name == "") {
			return out[i].name == ""
		}
		return out[i].name < out[j].name
	})
	for _, g := range out {
		sort.Slice(g.versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(g.versions[i].Version, g.versions[j].Version) > 0
		})
	}
	return out
}

// groupVersions lists every group-version this server serves itself,
// group by group: what its OpenAPI documents describe. (kube-aggregator
// also merges in the aggregated servers' own documents; mkube does not,
// so kubectl validates their objects by the server's fieldValidation.)
func (s *Server) groupVersions() []schema.GroupVersion {
	aggregated := map[schema.GroupVersion]bool{}
	for _, a := range s.aggregatedGroupVersions() {
		aggregated[a.GroupVersion] = true
	}
	var out []schema.GroupVersion
	for _, g := range s.groups() {
		for _, gv := range g.versions {
			if !aggregated[gv] {
				out = append(out, gv)
			}
		}
	}
	return out
}

// discoveryEntries describes a resource and its subresources.
func discoveryEntries(res *Resource) []metav1.APIResource {
	verbs := metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	if res.Verbs != nil {
		verbs = res.Verbs
	}
	main := metav1.APIResource{
		Name: res.Name, SingularName: strings.ToLower(res.Kind), Namespaced: res.Namespaced, Kind: res.Kind,
		Verbs: verbs, ShortNames: res.ShortNames, Categories: res.Categories,
	}
	out := []metav1.APIResource{main}
	for _, sub := range res.Subresources {
		kind := sub.Kind
		if kind == "" {
			kind = res.Kind
		}
		out = append(out, metav1.APIResource{Name: res.Name + "/" + sub.Name, Namespaced: res.Namespaced,
			Group: sub.Group, Version: sub.Version, Kind: kind, Verbs: sub.Verbs})
	}
	return out
}

// notFoundPath is kube-apiserver's answer to a path it does not serve.
func notFoundPath(path string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Details: &metav1.StatusDetails{}, Message: "the server could not find the requested resource"}}
}
