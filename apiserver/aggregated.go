package apiserver

import (
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Aggregated are the group-versions other API servers serve through this
// one: kube-aggregator's APIServices backed by a Service (an aggregated
// API server such as metrics-server), kept by apiserver/aggregator. Their
// requests are proxied, and discovery lists them beside the built-in
// group-versions.
type Aggregated interface {
	// Proxy is the handler of every request under /apis/<group>/<version>
	// for gv, or nil when this server serves gv itself.
	Proxy(gv schema.GroupVersion) http.Handler
	// GroupVersions are the aggregated group-versions, in no order.
	GroupVersions() []AggregatedGroupVersion
}

// AggregatedGroupVersion is one aggregated group-version and what its
// server last said it serves.
type AggregatedGroupVersion struct {
	schema.GroupVersion
	// Resources is its server's APIResourceList, from the last discovery
	// check that passed; nil if none has.
	Resources []metav1.APIResource
	// Stale: the last check failed, so Resources may be out of date.
	Stale bool
}

// aggregated is the proxy of the request's group-version, nil if the
// request is not for an aggregated one. Only /apis/<group>/<version>/...
// can be: /apis and /apis/<group> are this server's to answer, as
// kube-aggregator answers them from the APIServices.
func (s *Server) aggregated(r *http.Request) http.Handler {
	if s.cfg.Aggregated == nil {
		return nil
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/apis/"), "/", 3)
	if !strings.HasPrefix(r.URL.Path, "/apis/") || len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return nil
	}
	return s.cfg.Aggregated.Proxy(schema.GroupVersion{Group: parts[0], Version: parts[1]})
}

// aggregatedGroupVersions are the aggregated group-versions discovery
// lists, none if there is no aggregator.
func (s *Server) aggregatedGroupVersions() []AggregatedGroupVersion {
	if s.cfg.Aggregated == nil {
		return nil
	}
	return s.cfg.Aggregated.GroupVersions()
}
