package apiserver

import (
	"crypto/sha512"
	"encoding/hex"
	"mime"
	"net/http"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Aggregated discovery (apidiscovery.k8s.io/v2, GA in Kubernetes v1.30):
// a client that names the APIGroupDiscoveryList type in its Accept header
// gets every group, version and resource of /apis (or of the core group,
// at /api) in one answer, instead of one request per group-version.
// kubectl and client-go ask for it first and fall back to the legacy
// documents only when the answer's Content-Type is plain JSON.
const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// wantsAggregated: the first media type of the Accept header that this
// server can produce is the aggregated list. Kubernetes v1.37 serves only
// v2 (v2beta1 was removed in v1.35), and mkube only its JSON form; a
// profile parameter (client-go's "nopeer") changes nothing with one server.
func wantsAggregated(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		base, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch {
		case base == "application/json" && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList":
			return true
		case base == "application/json" && params["as"] == "" || base == "*/*" || base == "application/*":
			return false // the legacy document comes first
		}
	}
	return false
}

// serveAggregated answers /api (core) or /apis (every named group) with
// an APIGroupDiscoveryList, with an ETag so a client holding the same
// document gets 304 Not Modified, as kube-apiserver does.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, core bool) {
	list := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"}}
	for _, g := range s.groups() {
		if (g.name == "") != core {
			continue
		}
		group := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
		for _, v := range g.versions {
			group.Versions = append(group.Versions, apidiscoveryv2.APIVersionDiscovery{
				Version: v.Version, Resources: s.resourceDiscovery(v), Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent})
		}
		list.Items = append(list.Items, group)
	}
	data, err := jsonEncode(list)
	if err != nil {
		writeError(w, err)
		return
	}
	sum := sha512.Sum512(data)
	etag := `"` + strings.ToUpper(hex.EncodeToString(sum[:])) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Vary", "Accept")
	w.Header().Set("Cache-Control", "public")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", aggregatedContentType)
	w.WriteHeader(http.StatusOK)
	w.Write(append(data, '\n'))
}

// resourceDiscovery is a group-version's resources, each with its
// subresources nested inside: the legacy APIResourceList entries
// regrouped, as kube-apiserver's ConvertGroupVersionIntoToDiscovery does,
// so both documents always say the same. Resources are sorted by name.
func (s *Server) resourceDiscovery(gv schema.GroupVersion) []apidiscoveryv2.APIResourceDiscovery {
	var out []apidiscoveryv2.APIResourceDiscovery
	for _, res := range s.resources() {
		if res.GroupVersion != gv {
			continue
		}
		entries := discoveryEntries(res)
		main := entries[0]
		scope := apidiscoveryv2.ScopeCluster
		if main.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		d := apidiscoveryv2.APIResourceDiscovery{
			Resource: main.Name, SingularResource: main.SingularName, Scope: scope, Verbs: main.Verbs,
			ShortNames: main.ShortNames, Categories: main.Categories,
			ResponseKind: &metav1.GroupVersionKind{Group: main.Group, Version: main.Version, Kind: main.Kind},
		}
		for _, sub := range entries[1:] {
			d.Subresources = append(d.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  strings.TrimPrefix(sub.Name, main.Name+"/"),
				ResponseKind: &metav1.GroupVersionKind{Group: sub.Group, Version: sub.Version, Kind: sub.Kind},
				Verbs:        sub.Verbs,
			})
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}
