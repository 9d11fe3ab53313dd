package metricsserver

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/internal/delegatedauth"
)

// Delegated authentication and authorization, as k8s.io/apiserver sets
// them up for an aggregated server such as metrics-server: the cluster's
// API server says who sent a request and what they may do.
//
// Authentication tries the front proxy (a client certificate verified
// against requestheader-client-ca-file, CN among requestheader-allowed-
// names, naming the user in X-Remote-User, X-Remote-Group,
// X-Remote-Extra-: how the aggregator passes on its user), then a client
// certificate verified against client-ca-file, then a bearer token in a
// TokenReview; none is system:anonymous. Authorization is a
// SubjectAccessReview, except for the health paths and system:masters.
// The CAs and header names are kube-system/extension-apiserver-authentication's,
// read at start. The reviews are package delegatedauth's, whose answers
// are kept for k8s.io/apiserver's 10 s.

const authConfigMapPath = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"

// apiClient is what the server asks the API server: mkube's client.Client.
type apiClient interface {
	Do(ctx context.Context, method, path string, body, out any) error
}

type delegatedAuth struct {
	api      apiClient
	reviewer *delegatedauth.Reviewer // TokenReviews and SubjectAccessReviews, cached

	clientCA, frontProxyCA *x509.CertPool
	allowedNames           []string
	userHeaders            []string
	groupHeaders           []string
	extraPrefixes          []string
}

var anonymous = authenticationv1.UserInfo{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}

// loadDelegatedAuth reads the ConfigMap; without it there are no client
// certificates to trust. Failing to read it stops the server unless
// tolerate is set.
func loadDelegatedAuth(ctx context.Context, api apiClient, clk clock.PassiveClock, tolerate bool) (*delegatedAuth, error) {
	a := &delegatedAuth{api: api, reviewer: delegatedauth.New(api, clk, delegatedauth.APIServerTTLs)}
	var cm corev1.ConfigMap
	err := api.Do(ctx, http.MethodGet, authConfigMapPath, nil, &cm)
	switch {
	case err == nil:
		return a, a.configure(cm.Data)
	case apierrors.IsNotFound(err), tolerate:
		return a, nil
	}
	return nil, fmt.Errorf("unable to load configmap based request-header-client-ca-file: %w", err)
}

func (a *delegatedAuth) configure(data map[string]string) error {
	pool := func(key string) *x509.CertPool {
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM([]byte(data[key])) {
			return nil
		}
		return p
	}
	a.clientCA, a.frontProxyCA = pool("client-ca-file"), pool("requestheader-client-ca-file")
	for key, into := range map[string]*[]string{"requestheader-username-headers": &a.userHeaders, "requestheader-group-headers": &a.groupHeaders,
		"requestheader-extra-headers-prefix": &a.extraPrefixes, "requestheader-allowed-names": &a.allowedNames} {
		if data[key] != "" {
			if err := json.Unmarshal([]byte(data[key]), into); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	return nil
}

// authenticate names the request's user from the connection's client
// certificates (peers) and its headers; an error is a 401.
func (a *delegatedAuth) authenticate(r *http.Request, peers []*x509.Certificate) (authenticationv1.UserInfo, error) {
	if len(peers) > 0 && a.frontProxyCA != nil && verifies(a.frontProxyCA, peers) {
		if len(a.allowedNames) > 0 && !slices.Contains(a.allowedNames, peers[0].Subject.CommonName) {
			return anonymous, fmt.Errorf("requestheader: client certificate %q is not allowed", peers[0].Subject.CommonName)
		}
		if user := a.frontProxyUser(r.Header); user.Username != "" {
			return user, nil
		}
	}
	if len(peers) > 0 && a.clientCA != nil {
		if !verifies(a.clientCA, peers) {
			return anonymous, errors.New("x509: certificate signed by unknown authority")
		}
		return authenticationv1.UserInfo{Username: peers[0].Subject.CommonName,
			Groups: append(slices.Clone(peers[0].Subject.Organization), "system:authenticated")}, nil
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if strings.EqualFold(scheme, "bearer") && strings.TrimSpace(token) != "" {
		return a.tokenUser(r.Context(), strings.TrimSpace(token))
	}
	return anonymous, nil
}

func verifies(roots *x509.CertPool, peers []*x509.Certificate) bool {
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	for _, c := range peers[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := peers[0].Verify(opts)
	return err == nil
}

// frontProxyUser is the user the front proxy's headers name.
func (a *delegatedAuth) frontProxyUser(h http.Header) authenticationv1.UserInfo {
	var user authenticationv1.UserInfo
	for _, name := range a.userHeaders {
		if v := h.Get(name); v != "" && user.Username == "" {
			user.Username = v
		}
	}
	for _, name := range a.groupHeaders {
		user.Groups = append(user.Groups, h.Values(name)...)
	}
	for name, values := range h {
		for _, prefix := range a.extraPrefixes {
			if strings.HasPrefix(strings.ToLower(name), strings.ToLower(prefix)) {
				key, _ := url.PathUnescape(strings.ToLower(name[len(prefix):]))
				if user.Extra == nil {
					user.Extra = map[string]authenticationv1.ExtraValue{}
				}
				user.Extra[key] = append(user.Extra[key], values...)
			}
		}
	}
	if user.Username != "" && !slices.Contains(user.Groups, "system:authenticated") {
		user.Groups = append(user.Groups, "system:authenticated")
	}
	return user
}

// tokenUser asks a TokenReview who holds token.
func (a *delegatedAuth) tokenUser(ctx context.Context, token string) (authenticationv1.UserInfo, error) {
	user, ok, err := a.reviewer.ReviewToken(ctx, token)
	switch {
	case err != nil:
		return anonymous, err
	case !ok:
		return anonymous, errors.New("invalid bearer token")
	}
	return user, nil
}

// authorize asks a SubjectAccessReview whether user may make the request.
func (a *delegatedAuth) authorize(ctx context.Context, user authenticationv1.UserInfo, info requestInfo) (bool, string, error) {
	if slices.Contains(user.Groups, "system:masters") {
		return true, "", nil
	}
	spec := delegatedauth.Spec(user)
	if info.resource != "" {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: info.namespace, Verb: info.verb, Group: metricsGroup,
			Version: metricsVersion, Resource: info.resource, Name: info.name}
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: info.path, Verb: info.verb}
	}
	return a.reviewer.ReviewAccess(ctx, spec)
}
