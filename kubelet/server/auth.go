package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/mkube/mkube/internal/delegatedauth"
)

// Who may use the port, as a real kubelet decides it
// (pkg/kubelet/server/auth.go and the delegating authenticator and
// authorizer of k8s.io/apiserver it builds with):
//
//   - authentication: a client certificate the client CA signed (its CN
//     the user, its O the groups), else a bearer token a TokenReview
//     accepts, else, with anonymous on, system:anonymous in
//     system:unauthenticated. Bad credentials are a 401 even with
//     anonymous on: only a request with none is anonymous.
//   - authorization: AlwaysAllow, or Webhook: a SubjectAccessReview of
//     the verb the method is on the resource nodes, named the node, with
//     the subresource the path is (attributes).

// Authorization modes (--authorization-mode).
const (
	AlwaysAllow = "AlwaysAllow"
	Webhook     = "Webhook"
)

// Reviewer asks the API server: package delegatedauth's Reviewer.
type Reviewer interface {
	ReviewToken(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error)
	ReviewAccess(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, string, error)
}

// Auth is the port's authentication and authorization: the kubelet's
// --anonymous-auth, --authentication-token-webhook and
// --authorization-mode; ClientCAs is its --client-ca-file (the TLS
// handshake asks for a certificate, tls.go, and authenticate judges it).
// The zero Auth lets nobody in; the kubelet's defaults are Anonymous and
// AlwaysAllow (Open).
type Auth struct {
	Anonymous    bool
	ClientCAs    *x509.CertPool // nil: no client certificate authenticates
	TokenWebhook bool           // bearer tokens are checked with TokenReviews
	Mode         string         // AlwaysAllow or Webhook
	Reviewer     Reviewer       // for TokenWebhook and Webhook
}

// Open is the kubelet's command-line defaults: anyone may do anything.
var Open = Auth{Anonymous: true, Mode: AlwaysAllow}

var anonymous = authenticationv1.UserInfo{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}

// authenticate is the request's user; ok false is a 401. A client
// certificate the CA did not sign does not stop a good token, as the
// union of authenticators tries each; but it is never anonymous.
func (a Auth) authenticate(r *http.Request) (user authenticationv1.UserInfo, ok bool, err error) {
	var certErr error
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 && a.ClientCAs != nil {
		peers := r.TLS.PeerCertificates
		opts := x509.VerifyOptions{Roots: a.ClientCAs, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		for _, c := range peers[1:] {
			opts.Intermediates.AddCert(c)
		}
		if _, certErr = peers[0].Verify(opts); certErr == nil {
			subject := peers[0].Subject
			return authenticated(authenticationv1.UserInfo{Username: subject.CommonName, Groups: slices.Clone(subject.Organization)}), true, nil
		}
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if token = strings.TrimSpace(token); a.TokenWebhook && strings.EqualFold(scheme, "bearer") && token != "" {
		user, ok, err := a.Reviewer.ReviewToken(r.Context(), token)
		if err != nil || !ok {
			return anonymous, false, err
		}
		return authenticated(user), true, nil
	}
	if certErr != nil {
		return anonymous, false, certErr
	}
	return anonymous, a.Anonymous, nil
}

// authenticated adds system:authenticated, as k8s.io/apiserver's
// AuthenticatedGroupAdder does for every authenticated user.
func authenticated(user authenticationv1.UserInfo) authenticationv1.UserInfo {
	if !slices.Contains(user.Groups, "system:authenticated") {
		user.Groups = append(slices.Clone(user.Groups), "system:authenticated")
	}
	return user
}

// verb is the API verb of an HTTP method, as the kubelet maps it.
func verb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return "" // HEAD, OPTIONS...: as the kubelet, no verb
}

// subresource is the nodes subresource a path is authorized as:
// /stats, /metrics, /logs and /spec and below are their own, everything
// else (containerLogs, exec, attach, portForward, pods, healthz, ...)
// is proxy.
func subresource(p string) string {
	for _, s := range []struct{ prefix, sub string }{{"/stats", "stats"}, {"/metrics", "metrics"}, {"/logs", "log"}, {"/spec", "spec"}} {
		if p == s.prefix || strings.HasPrefix(p, s.prefix+"/") {
			return s.sub
		}
	}
	return "proxy"
}

// attributes are the node a request is for and what it does to it. A
// fleet node's own paths (/nodes/NAME/metrics/resource) are NAME's, and
// authorized as the path below the prefix; a request through the API
// server's node proxy names its node in NodeHeader; else it is the
// process's first node's, as a real kubelet's is its one node's.
func (s *Server) attributes(r *http.Request) (node, verbName, sub string) {
	p := path.Clean("/" + r.URL.Path)
	node = s.nodeName
	if rest, ok := strings.CutPrefix(p, "/nodes/"); ok {
		name, below, _ := strings.Cut(rest, "/")
		node, p = name, "/"+below
	} else if h := r.Header.Get(NodeHeader); h != "" {
		node = h
	}
	return node, verb(r.Method), subresource(p)
}

// withAuth answers 401 or 403 as the kubelet does, or serves next.
func (s *Server) withAuth(next http.Handler) http.Handler {
	a := s.auth
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok, err := a.authenticate(r)
		if !ok {
			if err != nil {
				s.log.Info("unable to authenticate the request", "path", r.URL.Path, "err", err)
			}
			writeText(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		if a.Mode == AlwaysAllow {
			next.ServeHTTP(w, r)
			return
		}
		node, v, sub := s.attributes(r)
		spec := delegatedauth.Spec(user)
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: v, Version: "v1", Resource: "nodes", Subresource: sub, Name: node}
		said := fmt.Sprintf("(user=%s, verb=%s, resource=nodes, subresource=%s)", user.Username, v, sub)
		allowed, reason, err := a.Reviewer.ReviewAccess(r.Context(), spec)
		switch {
		case err != nil:
			s.log.Error("authorization error", "user", user.Username, "verb", v, "subresource", sub, "err", err)
			writeText(w, http.StatusInternalServerError, "Authorization error "+said)
		case !allowed:
			s.log.Debug("forbidden", "user", user.Username, "verb", v, "node", node, "subresource", sub, "reason", reason)
			writeText(w, http.StatusForbidden, "Forbidden "+said)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// writeText is the kubelet's plain-text error answer (go-restful's
// WriteErrorString: no trailing newline).
func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	w.Write([]byte(msg))
}
