// Package authentication tells who sent a request, as kube-apiserver's
// authenticators do, before anything else looks at it:
//
//   - on the secure port, a client certificate signed by the cluster's CA
//     names the user (its CN) and the groups (its O), and every such user
//     is also in system:authenticated. A certificate the CA did not sign,
//     or that has expired, is 401 Unauthorized.
//   - on the secure port without a certificate the request is anonymous:
//     system:anonymous, in system:unauthenticated.
//   - on the learner's plain port every request is system:unsecured in
//     system:masters, as on kube-apiserver's old insecure port.
//
// What a user may then do is authorization's business (RBAC, next).
package authentication

import (
	"context"
	"crypto/x509"
	"net/http"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// Authenticator checks client certificates against the cluster's CA.
type Authenticator struct {
	clientCAs *x509.CertPool
	clock     clock.PassiveClock
}

// New trusts client certificates signed by ca; nil clk is the real clock.
func New(ca *x509.Certificate, clk clock.PassiveClock) *Authenticator {
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Authenticator{clientCAs: pool, clock: clk}
}

// Authenticate says who sent r, or why it cannot be believed (401).
func (a *Authenticator) Authenticate(r *http.Request) (authenticationv1.UserInfo, error) {
	switch {
	case r.TLS == nil:
		return UnsecuredUser(), nil
	case len(r.TLS.PeerCertificates) == 0:
		return authenticationv1.UserInfo{Username: Anonymous, Groups: []string{Unauthenticated}}, nil
	}
	certs := r.TLS.PeerCertificates
	intermediates := x509.NewCertPool()
	for _, c := range certs[1:] {
		intermediates.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: a.clientCAs, Intermediates: intermediates,
		CurrentTime: a.clock.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return authenticationv1.UserInfo{}, apierrors.NewUnauthorized("Unauthorized")
	}
	subject := certs[0].Subject
	groups := slices.Clone(subject.Organization)
	if !slices.Contains(groups, Authenticated) {
		groups = append(groups, Authenticated)
	}
	return authenticationv1.UserInfo{Username: subject.CommonName, Groups: groups}, nil
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
