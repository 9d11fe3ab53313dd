package apiserver

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RequestInfo is what a resource request asks for, read off its path and
// method the way kube-apiserver's RequestInfoFactory does:
//
//	/api/v1/namespaces/default/pods/web-1/status
//	     └core v1  └namespace   └resource └name └subresource
//	/apis/apps/v1/replicasets?watch=true   (all namespaces, verb watch)
type RequestInfo struct {
	GroupVersion schema.GroupVersion
	Namespace    string
	Resource     string
	Name         string
	Subresource  string
	// Verb is Kubernetes' verb, not the HTTP method: get, list, watch,
	// create, update, patch, delete or deletecollection.
	Verb string
}

// parseRequestInfo returns false for paths that are not resource requests.
func parseRequestInfo(r *http.Request) (RequestInfo, bool) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var info RequestInfo
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		info.GroupVersion = schema.GroupVersion{Version: parts[1]}
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		info.GroupVersion = schema.GroupVersion{Group: parts[1], Version: parts[2]}
		parts = parts[3:]
	default:
		return info, false
	}
	// "namespaces/<ns>/<resource>..." scopes a namespaced resource, but
	// "namespaces" and "namespaces/<name>[/status]" are the namespace itself.
	if parts[0] == "namespaces" && len(parts) >= 3 && parts[2] != "status" && parts[2] != "finalize" {
		info.Namespace = parts[1]
		parts = parts[2:]
	}
	info.Resource = parts[0]
	if len(parts) > 1 {
		info.Name = parts[1]
	}
	if len(parts) > 2 {
		info.Subresource = parts[2]
	}
	// Only a proxy subresource has a path below it:
	// nodes/<name>/proxy/<path on the kubelet>.
	if len(parts) > 3 && info.Subresource != "proxy" {
		return info, false
	}
	info.Verb = verbOf(r, info.Name != "")
	return info, true
}

func verbOf(r *http.Request, named bool) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if w := r.URL.Query().Get("watch"); w == "true" || w == "1" {
			return "watch"
		}
		if named {
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return ""
}
