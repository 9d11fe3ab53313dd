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
			entries, freshness, ok := s.versionEntries(v)
			if ok {
				group.Versions = append(group.Versions, apidiscoveryv2.APIVersionDiscovery{
					Version: v.Version, Resources: resourceDiscovery(entries), Freshness: freshness})
			}
		}
		if len(group.Versions) > 0 {
			list.Items = append(list.Items, group)
		}
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

// versionEntries are the APIResourceList entries of a group-version:
// this server's own, or what an aggregated API server last listed (Stale
// when its last check failed). ok is false for an aggregated
// group-version never listed: kube-aggregator leaves it out of the
// document until its server has answered.
func (s *Server) versionEntries(gv schema.GroupVersion) (entries []metav1.APIResource, freshness apidiscoveryv2.DiscoveryFreshness, ok bool) {
	for _, a := range s.aggregatedGroupVersions() {
		if a.GroupVersion == gv {
			if a.Stale {
				return a.Resources, apidiscoveryv2.DiscoveryFreshnessStale, a.Resources != nil
			}
			return a.Resources, apidiscoveryv2.DiscoveryFreshnessCurrent, a.Resources != nil
		}
	}
	for _, res := range s.resources() {
		if res.GroupVersion == gv {
			entries = append(entries, discoveryEntries(res)...)
		}
	}
	return entries, apidiscoveryv2.DiscoveryFreshnessCurrent, true
}

// resourceDiscovery regroups a group-version's legacy APIResourceList
// entries, each subresource ("pods/status") nested in its resource, as
// kube-apiserver's ConvertGroupVersionIntoToDiscovery does, so both
// documents always say the same. Resources are sorted by name.
func resourceDiscovery(entries []metav1.APIResource) []apidiscoveryv2.APIResourceDiscovery {
	var out []apidiscoveryv2.APIResourceDiscovery
	index := map[string]int{}
	for _, main := range entries {
		if strings.Contains(main.Name, "/") {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if main.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		index[main.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource: main.Name, SingularResource: main.SingularName, Scope: scope, Verbs: main.Verbs,
			ShortNames: main.ShortNames, Categories: main.Categories,
			ResponseKind: &metav1.GroupVersionKind{Group: main.Group, Version: main.Version, Kind: main.Kind},
		})
	}
	for _, sub := range entries {
		parent, name, ok := strings.Cut(sub.Name, "/")
		i, known := index[parent]
		if !ok || !known {
			continue
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource:  name,
			ResponseKind: &metav1.GroupVersionKind{Group: sub.Group, Version: sub.Version, Kind: sub.Kind},
			Verbs:        sub.Verbs,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}
