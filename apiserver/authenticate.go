package apiserver

import (
	"net/http"
	"strings"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/mkube/mkube/apiserver/audit"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
)

// authenticate puts who sent the request into its context, or answers
// 401 Unauthorized for a credential that cannot be believed. The
// authenticator goes into the context too, for TokenReviews.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		user := authentication.UnsecuredUser()
		if a := s.cfg.Authenticator; a != nil {
			var err error
			if user, err = a.Authenticate(r); err != nil {
				writeError(w, err)
				return
			}
			ctx = authentication.WithAuthenticator(ctx, a)
		}
		audit.SetUser(ctx, user)
		next.ServeHTTP(w, r.WithContext(authentication.WithUser(ctx, user)))
	})
}

// audit logs the request in the audit log, if there is one: the first
// filter, so that a request refused by authentication is logged too.
func (s *Server) audit(next http.Handler) http.Handler {
	if s.cfg.Audit == nil {
		return next
	}
	return s.cfg.Audit.Handler(next, describeForAudit)
}

// longRunning are the subresources whose answers go on, as
// kube-apiserver's BasicLongRunningRequestCheck has them.
var longRunning = map[string]bool{"attach": true, "exec": true, "proxy": true, "log": true, "portforward": true}

// describeForAudit reads the request as authorization does: the verb and
// the object, if it is a resource request.
func describeForAudit(r *http.Request) audit.Request {
	info, ok := parseRequestInfo(r)
	if !ok {
		return audit.Request{Verb: strings.ToLower(r.Method)}
	}
	return audit.Request{Verb: info.Verb, LongRunning: info.Verb == "watch" || longRunning[info.Subresource],
		ObjectRef: &auditv1.ObjectReference{Resource: info.Resource, Namespace: info.Namespace, Name: info.Name,
			APIGroup: info.GroupVersion.Group, APIVersion: info.GroupVersion.Version, Subresource: info.Subresource}}
}

// ServiceAccountTokens is the server's service-account token issuer, for
// TokenRequests; nil if it has none.
func (q *Request) ServiceAccountTokens() *serviceaccount.Tokens {
	return q.srv.cfg.ServiceAccountTokens
}
