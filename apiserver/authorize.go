package apiserver

import (
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/mkube/mkube/apiserver/audit"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization"
)

// authorize runs after authenticate: it switches to the user the request
// impersonates (kubectl --as), if its sender may, then asks the server's
// authorizer whether that user may do what the request asks, and answers
// 403 Forbidden, in Kubernetes' words, if not. An allowed request carries
// the authorizer and its attributes in its context, for the access
// reviews.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		user, _ := authentication.UserFrom(ctx)
		if as, ok, err := authorization.Impersonate(ctx, s.cfg.Authorizer, user, r.Header); err != nil {
			writeError(w, err)
			return
		} else if ok {
			s.log.Debug("impersonating", "user", user.Username, "as", as.Username)
			audit.SetImpersonatedUser(ctx, as)
			user, ctx = as, authentication.WithUser(ctx, as)
		}
		a := requestAttributes(r, user)
		d, reason, err := s.cfg.Authorizer.Authorize(ctx, a)
		audit.SetDecision(ctx, d == authorization.Allow, reason)
		if d != authorization.Allow {
			args := []any{"user", user.Username, "verb", a.Verb, "path", r.URL.Path}
			if err != nil {
				args = append(args, "err", err)
			}
			s.log.Debug("forbidden", args...)
			writeError(w, authorization.Forbidden(a, reason))
			return
		}
		next.ServeHTTP(w, r.WithContext(authorization.WithRequest(ctx, s.cfg.Authorizer, a)))
	})
}

// requestAttributes reads what a request asks as kube-apiserver's
// RequestInfoFactory does: a resource request from its path (and a
// namespace's own path is in that namespace, so that a RoleBinding can
// grant reading it), anything else by its path and method.
func requestAttributes(r *http.Request, user authenticationv1.UserInfo) authorization.Attributes {
	info, ok := parseRequestInfo(r)
	if !ok {
		return authorization.Attributes{User: user, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
	}
	a := authorization.Attributes{User: user, Verb: info.Verb, ResourceRequest: true,
		APIGroup: info.GroupVersion.Group, APIVersion: info.GroupVersion.Version,
		Resource: info.Resource, Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name}
	if a.Resource == "namespaces" && a.APIGroup == "" {
		a.Namespace = a.Name
	}
	if a.Name == "" && (a.Verb == "list" || a.Verb == "watch") && strings.Contains(r.URL.RawQuery, "fieldSelector") {
		// `kubectl get configmap my-config -w` lists by name: a rule
		// with resourceNames may grant it. The Node authorizer reads
		// the selector itself (a kubelet's spec.nodeName=<node>).
		a.FieldSelector = r.URL.Query().Get("fieldSelector")
		a.Name = nameSelected(a.FieldSelector)
	}
	return a
}

// nameSelected is the name a field selector metadata.name=NAME asks for.
func nameSelected(selector string) string {
	if selector == "" {
		return ""
	}
	fs, err := fields.ParseSelector(selector)
	if err != nil {
		return ""
	}
	if name, ok := fs.RequiresExactMatch("metadata.name"); ok && len(path.IsValidPathSegmentName(name)) == 0 {
		return name
	}
	return ""
}
