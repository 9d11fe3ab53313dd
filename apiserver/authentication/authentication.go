// Package authentication tells who sent a request, as kube-apiserver's
// authenticators do, before anything else looks at it. It is a union: each
// way of proving who one is is tried in kube-apiserver's order, and the
// first that believes the request names the user:
//
//   - on the secure port, a client certificate signed by the cluster's CA
//     names the user (its CN) and the groups (its O);
//   - a bearer token (`Authorization: Bearer <token>`, bearer.go) is one of
//     --token-auth-file's (tokenfile.go) or a service-account JWT that the
//     API server signed (package serviceaccount);
//   - a request with no credential at all is anonymous: system:anonymous,
//     in system:unauthenticated, unless --anonymous-auth=false makes it
//     401 Unauthorized.
//
// Every user a credential names is also in system:authenticated. A
// credential that cannot be believed (a certificate another CA signed, an
// expired one, an unknown or expired token, a token for another audience)
// is 401 Unauthorized even if anonymous requests are allowed: a bad
// password is not taken for no password. On the learner's plain port every
// request is system:unsecured in system:masters, as on kube-apiserver's
// old insecure port.
//
// What a user may then do is authorization's business (RBAC, next).
//
// Where things live:
//
//	file               what it holds
//	authentication.go  the Authenticator, the union in kube-apiserver's order; the names of anonymous and unsecured users
//	certcache.go       the cache of client certificate chains the CA vouched for, so a chain is verified once
//	bearer.go          ParseBearer
//	tokenfile.go       TokenFile: --token-auth-file's tokens, users and groups
package authentication

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/clock"
)

// The names Kubernetes gives users and groups that no credential names.
const (
	Anonymous       = "system:anonymous"
	Unauthenticated = "system:unauthenticated"
	Authenticated   = "system:authenticated"
	Unsecured       = "system:unsecured"
	Masters         = "system:masters"
)

// Authenticator is kube-apiserver's union of authenticators, as the flags
// configure it. Set its fields before it serves.
type Authenticator struct {
	clientCAs *x509.CertPool // nil: no certificate is believed
	clock     clock.PassiveClock
	verified  certCache // the chains clientCAs vouched for (certcache.go)

	// Tokens are tried in order for a bearer token: --token-auth-file's,
	// then the service-account tokens.
	Tokens []TokenAuthenticator
	// APIAudiences are --api-audiences: whom the API server's own tokens
	// are for. A token file's tokens, which name no audience, are good for
	// these only.
	APIAudiences []string
	// Anonymous is --anonymous-auth: a request without any credential is
	// system:anonymous (true, the default) or 401 Unauthorized.
	Anonymous bool
	// Log says why a credential was not believed; the client only hears
	// 401 Unauthorized.
	Log *slog.Logger
}

// New trusts client certificates signed by ca (none if ca is nil) and lets
// anonymous requests in; nil clk is the real clock.
func New(ca *x509.Certificate, clk clock.PassiveClock) *Authenticator {
	a := &Authenticator{Anonymous: true, Log: slog.Default(), clock: clk}
	if ca != nil {
		a.clientCAs = x509.NewCertPool()
		a.clientCAs.AddCert(ca)
	}
	if clk == nil {
		a.clock = clock.RealClock{}
	}
	return a
}

// Response is who a token's holder is, and which of the audiences asked
// for (or the API server's) the token is good for; nil for a token that
// names no audience.
type Response struct {
	User      authenticationv1.UserInfo
	Audiences []string
}

// TokenAuthenticator is one way of believing a bearer token. It answers
// ok=false with a nil error for a token that is not its kind (the next one
// is tried), and an error for one of its kind that cannot be believed.
// audiences are whom the token must be for; nil means the API server.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string, audiences []string) (resp Response, ok bool, err error)
}

// errInvalidBearerToken is what kube-apiserver logs for a token nobody
// believed, followed by each authenticator's reason.
var errInvalidBearerToken = errors.New("invalid bearer token")

// Authenticate says who sent r, or why it cannot be believed (401).
func (a *Authenticator) Authenticate(r *http.Request) (authenticationv1.UserInfo, error) {
	if r.TLS == nil {
		return UnsecuredUser(), nil
	}
	var failed []error
	if certs := r.TLS.PeerCertificates; len(certs) > 0 {
		u, err := a.verifyCertificate(certs)
		if err == nil {
			return u, nil
		}
		failed = append(failed, err)
	}
	if token, ok := ParseBearer(r.Header.Get("Authorization")); ok {
		resp, err := a.AuthenticateToken(r.Context(), token, nil)
		if err == nil {
			// As kube-apiserver: nothing behind authentication (a proxy to
			// a kubelet, say) ever sees the token.
			r.Header.Del("Authorization")
			return resp.User, nil
		}
		failed = append(failed, err)
	}
	switch {
	case len(failed) > 0:
		a.Log.Info("Unable to authenticate the request", "path", r.URL.Path, "err", utilerrors.NewAggregate(failed))
		return authenticationv1.UserInfo{}, apierrors.NewUnauthorized("Unauthorized")
	case !a.Anonymous:
		return authenticationv1.UserInfo{}, apierrors.NewUnauthorized("Unauthorized")
	}
	return authenticationv1.UserInfo{Username: Anonymous, Groups: []string{Unauthenticated}}, nil
}

// verifyCertificate checks the client's certificate chain against the CA.
func (a *Authenticator) verifyCertificate(certs []*x509.Certificate) (authenticationv1.UserInfo, error) {
	if a.clientCAs == nil {
		return authenticationv1.UserInfo{}, errors.New("x509: no client CA is configured")
	}
	now, key := a.clock.Now(), chainKey(certs)
	if u, ok := a.verified.get(key, now); ok {
		return u, nil // certcache.go: verified once, good until it expires
	}
	intermediates := x509.NewCertPool()
	for _, c := range certs[1:] {
		intermediates.AddCert(c)
	}
	chains, err := certs[0].Verify(x509.VerifyOptions{Roots: a.clientCAs, Intermediates: intermediates,
		CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return authenticationv1.UserInfo{}, fmt.Errorf("verifying certificate SN=%d failed: %w", certs[0].SerialNumber, err)
	}
	subject := certs[0].Subject
	u := withAuthenticated(authenticationv1.UserInfo{Username: subject.CommonName, Groups: slices.Clone(subject.Organization)})
	a.verified.put(key, chains, u)
	return u, nil
}

// AuthenticateToken asks each token authenticator in turn whose token is,
// for audiences (nil: the API server). It is what a request's bearer
// token and a TokenReview both go through.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string, audiences []string) (Response, error) {
	reasons := []error{errInvalidBearerToken}
	for _, t := range a.Tokens {
		resp, ok, err := t.AuthenticateToken(ctx, token, audiences)
		switch {
		case err != nil:
			reasons = append(reasons, err)
			continue
		case !ok:
			continue
		}
		if resp.Audiences == nil && audiences != nil {
			// A token that names no audience is the API server's own:
			// kube-apiserver's audience-agnostic wrapper.
			if resp.Audiences = intersect(a.APIAudiences, audiences); len(resp.Audiences) == 0 {
				continue
			}
		}
		resp.User = withAuthenticated(resp.User)
		return resp, nil
	}
	return Response{}, utilerrors.NewAggregate(reasons)
}

// withAuthenticated adds system:authenticated to u's groups, as
// kube-apiserver's AuthenticatedGroupAdder does for every credential.
func withAuthenticated(u authenticationv1.UserInfo) authenticationv1.UserInfo {
	if !slices.Contains(u.Groups, Authenticated) {
		u.Groups = append(slices.Clip(u.Groups), Authenticated)
	}
	return u
}

// intersect is what a and b have in common, in a's order.
func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// UnsecuredUser is who a request on the plain port is: anyone, with every
// right (system:masters).
func UnsecuredUser() authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: Unsecured, Groups: []string{Masters, Authenticated}}
}

type userKey struct{}

// WithUser records who sent the request in its context.
func WithUser(ctx context.Context, u authenticationv1.UserInfo) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom is who sent the request whose context this is.
func UserFrom(ctx context.Context) (authenticationv1.UserInfo, bool) {
	u, ok := ctx.Value(userKey{}).(authenticationv1.UserInfo)
	return u, ok
}

type authenticatorKey struct{}

// WithAuthenticator records the server's authenticator in a request's
// context, for the TokenReviews it answers.
func WithAuthenticator(ctx context.Context, a *Authenticator) context.Context {
	return context.WithValue(ctx, authenticatorKey{}, a)
}

// From is the authenticator of the server that took the request; nil if
// it has none (the plain port alone).
func From(ctx context.Context) *Authenticator {
	a, _ := ctx.Value(authenticatorKey{}).(*Authenticator)
	return a
}
