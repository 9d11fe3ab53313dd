package apiserver

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
)

// routeIssuerDiscovery serves the service-account issuer's OpenID
// Connect discovery (serviceaccount/discovery.go), as kube-apiserver
// does: GET /.well-known/openid-configuration and /openid/v1/jwks, which
// RBAC's system:service-account-issuer-discovery grants to every
// service account. A server without tokens, or whose issuer is not an
// https URL, serves neither (404), and says why once.
func (s *Server) routeIssuerDiscovery(r chi.Router) {
	t := s.cfg.ServiceAccountTokens
	if t == nil {
		return
	}
	d, err := t.Discovery()
	if err != nil {
		s.log.Warn("service account issuer discovery is off", "err", err)
		return
	}
	serve := func(contentType string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.Header().Set("Cache-Control", "public, max-age=3600")
			w.Write(body)
		}
	}
	r.Get(serviceaccount.OpenIDConfigurationPath, serve("application/json", d.Configuration))
	r.Get(serviceaccount.JWKSPath, serve("application/jwk-set+json", d.KeySet))
}
