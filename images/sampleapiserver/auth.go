package sampleapiserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// The sample-apiserver's delegated authentication and authorization, as
// k8s.io/apiserver's DelegatingAuthenticationOptions and
// DelegatingAuthorizationOptions set them up for an aggregated API
// server: it trusts the cluster's API server, reached with the pod's
// service-account token, to say who sent a request and what they may do.
//
// Authentication tries, in order:
//
//  1. the front proxy: a client certificate that verifies, for client
//     auth, against requestheader-client-ca-file, and whose CN is one of
//     requestheader-allowed-names (any, if none are listed), makes the
//     user the one the proxy names in a requestheader-username-headers
//     header (X-Remote-User), with the uid of requestheader-uid-headers
//     (X-Remote-Uid), the groups of requestheader-group-headers
//     (X-Remote-Group) and the extra of requestheader-extra-headers-prefix
//     (X-Remote-Extra-KEY): how the kube-apiserver's aggregator passes on
//     the user it authenticated;
//  2. a client certificate that verifies against client-ca-file: the user
//     is its CN, its groups its Os;
//  3. a bearer token, which the API server checks in a TokenReview.
//
// The first that names a user wins, and its user is also in
// system:authenticated. If none does, one that failed (a certificate
// that did not verify, a token the review refused) fails the request:
// 401. Otherwise the user is system:anonymous, in system:unauthenticated.
//
// The CAs and header names are the data of the ConfigMap
// kube-system/extension-apiserver-authentication, which the kube-apiserver
// publishes: read once at start (the real one then watches it). If it
// does not exist there are no client certificates to verify; if it
// cannot be read the server does not start, unless
// --authentication-tolerate-lookup-failure, with which it goes on
// without them.
//
// Authorization: /healthz, /readyz and /livez are open to anyone, and
// everything to system:masters; any other request is a
// SubjectAccessReview the API server answers, of the resource (verb,
// group, version, resource, subresource, namespace, name) or of the path
// (verb, path).
//
// Answers are kept for delegationCacheTTL, allowed or not, token or
// access review alike, as the real one's caches keep them.

// delegationCacheTTL is CacheTTL, AllowCacheTTL and DenyCacheTTL's
// default: "very low for responsiveness, but high enough to handle
// storms". A RoleBinding takes up to this long to show.
const delegationCacheTTL = 10 * time.Second

// The ConfigMap the kube-apiserver publishes for extension API servers,
// and the Role that lets a service account read it.
const (
	authConfigMapPath = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
	authReaderRole    = "extension-apiserver-authentication-reader"
)

// delegatedAuth is one server's authenticators and authorizer.
type delegatedAuth struct {
	p *shell.Process

	clientCA *x509.CertPool // client-ca-file; nil: no client certificate names a user
	// The front proxy, from the requestheader-* keys: frontProxyCA nil
	// is none.
	frontProxyConfigured bool // the requestheader controller runs (the lookup did not fail)
	frontProxyCA         *x509.CertPool
	allowedNames         []string
	usernameHeaders      []string
	uidHeaders           []string
	groupHeaders         []string
	extraPrefixes        []string

	mu      sync.Mutex
	tokens  map[string]cachedToken  // TokenReview answers, by token
	reviews map[string]cachedAccess // SubjectAccessReview answers, by the review's spec as JSON
}

type cachedToken struct {
	user    *authenticationv1.UserInfo // nil: not authenticated
	err     error                      // the review's error, if it gave one
	expires time.Time
}

type cachedAccess struct {
	allowed bool
	reason  string
	expires time.Time
}

// loadDelegatedAuth is the authentication options' ApplyTo: the
// in-cluster configuration (no kubeconfig is given), then the ConfigMap,
// failing as the real one does.
func loadDelegatedAuth(ctx context.Context, p *shell.Process, tolerateLookupFailure bool) (*delegatedAuth, error) {
	a := &delegatedAuth{p: p, frontProxyConfigured: true, tokens: map[string]cachedToken{}, reviews: map[string]cachedAccess{}}
	if _, err := lib.InClusterClient(p); err != nil {
		// getClient wraps it, and ApplyTo once more.
		return nil, fmt.Errorf("failed to get delegated authentication kubeconfig: failed to get delegated authentication kubeconfig: %v", err)
	}
	var cm corev1.ConfigMap
	err := kubeRequest(ctx, p, http.MethodGet, authConfigMapPath, nil, &cm)
	if err == nil {
		err = a.configure(cm.Data)
	}
	switch {
	case apierrors.IsNotFound(err):
		return a, nil // no client certificates, no front proxy
	case err == nil:
		return a, nil
	}
	if apierrors.IsForbidden(err) {
		lib.KlogLine(p, 'W', "requestheader_controller.go:204", "Unable to get configmap/extension-apiserver-authentication in kube-system.  Usually fixed by "+
			"'kubectl create rolebinding -n kube-system ROLEBINDING_NAME --role="+authReaderRole+" --serviceaccount=YOUR_NS:YOUR_SA'")
	}
	if !tolerateLookupFailure {
		return nil, fmt.Errorf("unable to load configmap based request-header-client-ca-file: %v", err)
	}
	lib.KlogLine(p, 'W', "authentication.go:397", fmt.Sprintf("Error looking up in-cluster authentication configuration: %v", err))
	lib.KlogLine(p, 'W', "authentication.go:398", "Continuing without authentication configuration. This may treat all requests as anonymous.")
	lib.KlogLine(p, 'W', "authentication.go:399", "To require authentication configuration lookup to succeed, set --authentication-tolerate-lookup-failure=false")
	*a = delegatedAuth{p: p, tokens: a.tokens, reviews: a.reviews}
	return a, nil
}

// configure reads the ConfigMap's data: two PEM bundles, and lists of
// strings each in JSON (`["X-Remote-User"]`). A bundle that does not
// parse verifies nothing; a list that does not parse is an error.
func (a *delegatedAuth) configure(data map[string]string) error {
	pool := func(key string) *x509.CertPool {
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM([]byte(data[key])) {
			return nil
		}
		return p
	}
	a.clientCA, a.frontProxyCA = pool("client-ca-file"), pool("requestheader-client-ca-file")
	for _, list := range []struct {
		key  string
		into *[]string
	}{
		{"requestheader-username-headers", &a.usernameHeaders},
		{"requestheader-uid-headers", &a.uidHeaders},
		{"requestheader-group-headers", &a.groupHeaders},
		{"requestheader-extra-headers-prefix", &a.extraPrefixes},
		{"requestheader-allowed-names", &a.allowedNames},
	} {
		if data[list.key] == "" {
			continue
		}
		if err := json.Unmarshal([]byte(data[list.key]), list.into); err != nil {
			return err
		}
	}
	return nil
}

// anonymous is the user of a request nothing authenticated.
var anonymous = authenticationv1.UserInfo{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}

// authenticate names the request's user, or fails (a 401).
func (a *delegatedAuth) authenticate(r *http.Request, peers []*x509.Certificate) (authenticationv1.UserInfo, error) {
	var errs []error
	for _, try := range []func() (*authenticationv1.UserInfo, error){
		func() (*authenticationv1.UserInfo, error) { return a.frontProxyUser(r, peers) },
		func() (*authenticationv1.UserInfo, error) { return a.clientCertUser(peers) },
		func() (*authenticationv1.UserInfo, error) { return a.tokenUser(r) },
	} {
		user, err := try()
		switch {
		case err != nil:
			errs = append(errs, err)
		case user != nil:
			if !slices.Contains(user.Groups, "system:authenticated") && !slices.Contains(user.Groups, "system:unauthenticated") {
				user.Groups = append(user.Groups, "system:authenticated")
			}
			return *user, nil
		}
	}
	if len(errs) > 0 {
		return authenticationv1.UserInfo{}, utilerrors.NewAggregate(errs)
	}
	return anonymous, nil
}

// frontProxyUser is the requestheader authenticator: nil if the request
// names no user in the headers.
func (a *delegatedAuth) frontProxyUser(r *http.Request, peers []*x509.Certificate) (*authenticationv1.UserInfo, error) {
	if a.frontProxyCA == nil || len(peers) == 0 {
		return nil, nil
	}
	if _, err := peers[0].Verify(clientVerifyOptions(a.frontProxyCA, peers)); err != nil {
		return nil, err
	}
	if cn := peers[0].Subject.CommonName; len(a.allowedNames) > 0 && !slices.Contains(a.allowedNames, cn) {
		return nil, fmt.Errorf("x509: subject with cn=%s is not in the allowed list", cn)
	}
	first := func(names []string) string {
		for _, name := range names {
			if v := r.Header.Get(name); v != "" {
				return v
			}
		}
		return ""
	}
	name := first(a.usernameHeaders)
	if name == "" {
		return nil, nil
	}
	user := &authenticationv1.UserInfo{Username: name, UID: first(a.uidHeaders), Groups: []string{}}
	for _, header := range a.groupHeaders {
		for _, v := range r.Header.Values(header) {
			if v != "" {
				user.Groups = append(user.Groups, v)
			}
		}
	}
	// X-Remote-Extra-Scopes: a, X-Remote-Extra-Scopes: b is the extra
	// "scopes": [a b]; a key is lower case and %-unescaped.
	for _, prefix := range a.extraPrefixes {
		for header, values := range r.Header {
			if len(header) < len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
				continue
			}
			key := strings.ToLower(header[len(prefix):])
			if unescaped, err := url.PathUnescape(key); err == nil {
				key = unescaped
			}
			if user.Extra == nil {
				user.Extra = map[string]authenticationv1.ExtraValue{}
			}
			user.Extra[key] = append(user.Extra[key], values...)
		}
	}
	return user, nil
}

// clientCertUser is the x509 authenticator: the CN and Os of a
// certificate client-ca-file's CAs signed, with the hash of the
// certificate as its credential id.
func (a *delegatedAuth) clientCertUser(peers []*x509.Certificate) (*authenticationv1.UserInfo, error) {
	if a.clientCA == nil || len(peers) == 0 {
		return nil, nil
	}
	cert := peers[0]
	if _, err := cert.Verify(clientVerifyOptions(a.clientCA, peers)); err != nil {
		return nil, fmt.Errorf("verifying certificate SN=%d, SKID=%s, AKID=%s failed: %w",
			cert.SerialNumber, colonHex(cert.SubjectKeyId), colonHex(cert.AuthorityKeyId), err)
	}
	if cert.Subject.CommonName == "" {
		return nil, nil
	}
	sum := sha256.Sum256(cert.Raw)
	return &authenticationv1.UserInfo{Username: cert.Subject.CommonName, Groups: slices.Clone(cert.Subject.Organization),
		Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/credential-id": {"X509SHA256=" + hex.EncodeToString(sum[:])}}}, nil
}

// clientVerifyOptions verifies a client's certificate against roots,
// with the others it sent as intermediates.
func clientVerifyOptions(roots *x509.CertPool, peers []*x509.Certificate) x509.VerifyOptions {
	intermediates := x509.NewCertPool()
	for _, c := range peers[1:] {
		intermediates.AddCert(c)
	}
	return x509.VerifyOptions{Roots: roots, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
}

// colonHex is a key id as the x509 authenticator prints it: "AB:CD:...".
func colonHex(b []byte) string {
	var parts []string
	for _, c := range b {
		parts = append(parts, fmt.Sprintf("%02X", c))
	}
	return strings.Join(parts, ":")
}

// tokenUser is the bearer token authenticator over the TokenReview
// webhook: nil for a request without "Authorization: Bearer ...", an
// error for a token the review does not authenticate.
func (a *delegatedAuth) tokenUser(r *http.Request) (*authenticationv1.UserInfo, error) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return nil, nil
	}
	token = strings.TrimSpace(token)
	now := a.p.Clock.Now()
	a.mu.Lock()
	cached, ok := a.tokens[token]
	a.mu.Unlock()
	if !ok || now.After(cached.expires) {
		review := authenticationv1.TokenReview{TypeMeta: metav1.TypeMeta{Kind: "TokenReview", APIVersion: "authentication.k8s.io/v1"},
			Spec: authenticationv1.TokenReviewSpec{Token: token}}
		if err := kubeRequest(r.Context(), a.p, http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", review, &review); err != nil {
			lib.KlogLine(a.p, 'E', "webhook.go:154", fmt.Sprintf("Failed to make webhook authenticator request: %v", err))
			return nil, err
		}
		cached = cachedToken{expires: now.Add(delegationCacheTTL)}
		switch st := review.Status; {
		case st.Authenticated:
			cached.user = &st.User
		case st.Error != "":
			cached.err = errors.New(st.Error)
		}
		a.mu.Lock()
		forgetExpired(a.tokens, now, func(c cachedToken) time.Time { return c.expires })
		a.tokens[token] = cached
		a.mu.Unlock()
	}
	if cached.user == nil {
		if cached.err != nil {
			return nil, cached.err
		}
		return nil, errors.New("invalid bearer token")
	}
	user := *cached.user
	user.Groups = slices.Clone(user.Groups)
	return &user, nil
}

// authorize asks whether user may make the request info describes: a
// SubjectAccessReview, unless the cache has its answer. An error is the
// review's failure (a 500), not a denial.
func (a *delegatedAuth) authorize(ctx context.Context, user authenticationv1.UserInfo, info requestInfo) (allowed bool, reason string, err error) {
	if slices.Contains(user.Groups, "system:masters") {
		return true, "", nil
	}
	spec := authorizationv1.SubjectAccessReviewSpec{User: user.Username, UID: user.UID, Groups: user.Groups}
	for k, v := range user.Extra {
		if spec.Extra == nil {
			spec.Extra = map[string]authorizationv1.ExtraValue{}
		}
		spec.Extra[k] = authorizationv1.ExtraValue(v)
	}
	if info.isResource {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: info.namespace, Verb: info.verb, Group: info.group,
			Version: info.version, Resource: info.resource, Subresource: info.subresource, Name: info.name}
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: info.path, Verb: info.verb}
	}
	key, _ := json.Marshal(spec)
	now := a.p.Clock.Now()
	a.mu.Lock()
	cached, ok := a.reviews[string(key)]
	a.mu.Unlock()
	if ok && !now.After(cached.expires) {
		return cached.allowed, cached.reason, nil
	}
	review := authorizationv1.SubjectAccessReview{TypeMeta: metav1.TypeMeta{Kind: "SubjectAccessReview", APIVersion: "authorization.k8s.io/v1"}, Spec: spec}
	if err := kubeRequest(ctx, a.p, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", review, &review); err != nil {
		return false, "", err
	}
	cached = cachedAccess{allowed: review.Status.Allowed && !review.Status.Denied, reason: review.Status.Reason, expires: now.Add(delegationCacheTTL)}
	a.mu.Lock()
	forgetExpired(a.reviews, now, func(c cachedAccess) time.Time { return c.expires })
	a.reviews[string(key)] = cached
	a.mu.Unlock()
	return cached.allowed, cached.reason, nil
}

// forgetExpired drops the answers that expired before now, so that a
// cache holds only the last delegationCacheTTL's.
func forgetExpired[V any](cache map[string]V, now time.Time, expires func(V) time.Time) {
	for k, v := range cache {
		if now.After(expires(v)) {
			delete(cache, k)
		}
	}
}

// kubeRequest sends one request to the cluster's API server, as
// client-go's in-cluster REST client does (https://KUBERNETES_SERVICE_HOST:
// KUBERNETES_SERVICE_PORT, the pod's token and CA), with in as its JSON
// body if not nil, and decodes the answer into out. An answer that is
// not 2xx is the API error its Status says.
func kubeRequest(ctx context.Context, p *shell.Process, method, path string, in, out any) error {
	client, err := lib.InClusterClient(p)
	if err != nil {
		return err
	}
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	host := net.JoinHostPort(p.Getenv("KUBERNETES_SERVICE_HOST"), p.Getenv("KUBERNETES_SERVICE_PORT"))
	req, err := http.NewRequestWithContext(ctx, method, "https://"+host+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var status metav1.Status
		if json.Unmarshal(data, &status) == nil && status.Kind == "Status" {
			return &apierrors.StatusError{ErrStatus: status}
		}
		return apierrors.NewGenericServerResponse(resp.StatusCode, strings.ToLower(method), schema.GroupResource{}, "", string(data), 0, true)
	}
	return json.Unmarshal(data, out)
}
