package apiserver

import (
	"net/http"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Discovery is how kubectl learns what this server serves: /api and /apis
// list the group-versions, and each group-version lists its resources with
// their kind, scope, verbs, short names and subresources. kubectl maps
// "po", "deploy" or "pods/eviction" to URLs from these answers, so they are
// generated from the registry rather than written by hand.

// serveAPIVersions answers /api: the legacy core group has only v1.
func (s *Server) serveAPIVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
		},
	})
}

// serveAPIGroups answers /apis: every named group with its one version.
func (s *Server) serveAPIGroups(w http.ResponseWriter, r *http.Request) {
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, gv := range s.groupVersions() {
		if gv.Group == "" {
			continue
		}
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		list.Groups = append(list.Groups, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
	}
	writeJSON(w, http.StatusOK, list)
}

// serveAPIGroup answers /apis/<group>.
func (s *Server) serveAPIGroup(w http.ResponseWriter, r *http.Request, group string) {
	for _, gv := range s.groupVersions() {
		if gv.Group == group {
			v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
			writeJSON(w, http.StatusOK, &metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
				Name: group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
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

// groupVersions lists every group-version with at least one resource,
// the core group first, then the others by name.
func (s *Server) groupVersions() []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, res := range s.resources() {
		if !seen[res.GroupVersion] {
			seen[res.GroupVersion] = true
			out = append(out, res.GroupVersion)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Group == "") != (out[j].Group == "") {
			return out[i].Group == ""
		}
		return out[i].String() < out[j].String()
	})
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
