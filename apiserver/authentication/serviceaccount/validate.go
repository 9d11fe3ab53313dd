package serviceaccount

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/go-jose/go-jose.v2/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	kubesa "k8s.io/apiserver/pkg/authentication/serviceaccount"
	tokenjwt "k8s.io/apiserver/pkg/authentication/token/jwt"

	"github.com/mkube/mkube/apiserver/audit"
	"github.com/mkube/mkube/apiserver/authentication"
)

// errInvalidated is Kubernetes' answer for a token whose bound object is
// gone or going.
var errInvalidated = errors.New("service account token has been invalidated")

var (
	serviceAccounts = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
	pods            = corev1.SchemeGroupVersion.WithResource("pods")
	secrets         = corev1.SchemeGroupVersion.WithResource("secrets")
	nodes           = corev1.SchemeGroupVersion.WithResource("nodes")
)

// AuthenticateToken checks a service-account token, in kube-apiserver's
// order (jwt.go, then claims.go):
//
//  1. Is it ours? A JWT whose iss is this issuer; anything else is not
//     this authenticator's (ok false, no error).
//  2. Its signature, by the key its kid names (every key if none).
//  3. Its audiences ∩ the audiences asked for (nil: the API server's).
//  4. Its time: exp, nbf and iat, with go-jose's leeway of a minute.
//  5. The service account exists with the token's UID, and so does the
//     pod, secret or node it is bound to, and none is being deleted
//     (since more than the leeway).
//
// The user is system:serviceaccount:<ns>:<name>, the service account's
// UID, in system:serviceaccounts and system:serviceaccounts:<ns>, with the
// pod, node and jti as extra (authentication.kubernetes.io/pod-name...).
func (t *Tokens) AuthenticateToken(ctx context.Context, token string, audiences []string) (authentication.Response, bool, error) {
	if !t.isOurs(token) {
		return authentication.Response{}, false, nil
	}
	tok, err := jwt.ParseSigned(token)
	if err != nil {
		return authentication.Response{}, false, nil
	}
	var public jwt.Claims
	var private privateClaims
	if err := t.verify(tok, &public, &private); err != nil {
		return authentication.Response{}, false, err
	}
	if public.Issuer != t.issuer {
		return authentication.Response{}, false, fmt.Errorf("token issuer %q is invalid", public.Issuer)
	}
	tokenAuds := []string(public.Audience)
	if len(tokenAuds) == 0 {
		tokenAuds = t.audiences // a legacy token is the API server's
	}
	if audiences == nil {
		audiences = t.audiences
	}
	var auds []string
	for _, a := range tokenAuds {
		if slices.Contains(audiences, a) {
			auds = append(auds, a)
		}
	}
	if len(auds) == 0 {
		return authentication.Response{}, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", tokenAuds, audiences)
	}
	info, err := t.validate(ctx, &public, &private)
	if err != nil {
		return authentication.Response{}, false, err
	}
	return authentication.Response{User: userInfo(info), Audiences: auds}, true, nil
}

// isOurs: a compact JWT whose (not yet verified) iss is this issuer.
func (t *Tokens) isOurs(token string) bool {
	if strings.HasPrefix(strings.TrimSpace(token), "{") {
		return false // the JSON serialization, which no Kubernetes token uses
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var claims struct {
		Issuer string `json:"iss"` // not verified: only to pick the authenticator
	}
	return json.Unmarshal(payload, &claims) == nil && claims.Issuer == t.issuer
}

// verify checks the signature with the keys the token's kid names and
// decodes the claims.
func (t *Tokens) verify(tok *jwt.JSONWebToken, public *jwt.Claims, private *privateClaims) error {
	var kid string
	for _, h := range tok.Headers {
		if h.KeyID != "" {
			kid = h.KeyID
			break
		}
	}
	keys := t.keys[kid]
	if kid == "" {
		for _, ks := range t.keys {
			keys = append(keys, ks...)
		}
	}
	if len(keys) == 0 {
		return errors.New("invalid signature, no keys found")
	}
	var errs []error
	for _, key := range keys {
		err := tok.Claims(key, public, private)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return utilerrors.NewAggregate(errs)
}

// validate is kube-apiserver's claims validator: the token's time, then
// the objects it names.
func (t *Tokens) validate(ctx context.Context, public *jwt.Claims, private *privateClaims) (*kubesa.ServiceAccountInfo, error) {
	now := t.clock.Now()
	switch err := public.ValidateWithLeeway(jwt.Expected{Time: now}, jwt.DefaultLeeway); {
	case err == nil:
	case errors.Is(err, jwt.ErrExpired):
		return nil, errors.New("service account token has expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, errors.New("service account token is not valid yet")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, errors.New("service account token is issued in the future")
	default:
		return nil, fmt.Errorf("service account token claims could not be validated: %w", err)
	}
	// Things deleted before now minus the leeway no longer vouch for a
	// token: the same minute of grace the clocks get.
	deletedBefore := now.Add(-jwt.DefaultLeeway)
	k := private.Kubernetes
	ns := k.Namespace
	obj, err := t.Objects.Get(ctx, serviceAccounts, ns, k.ServiceAccount.Name)
	if err != nil {
		return nil, err
	}
	sa := obj.(*corev1.ServiceAccount)
	if string(sa.UID) != k.ServiceAccount.UID {
		return nil, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, k.ServiceAccount.UID)
	}
	if deleted(sa.DeletionTimestamp, deletedBefore) {
		return nil, fmt.Errorf("service account %s/%s has been deleted", ns, sa.Name)
	}
	info := &kubesa.ServiceAccountInfo{Namespace: ns, Name: sa.Name, UID: string(sa.UID), CredentialID: tokenjwt.CredentialIDForJTI(public.ID)}
	if r := k.Secret; r != nil {
		if err := t.checkBound(ctx, secrets, ns, r, "secret", deletedBefore); err != nil {
			return nil, err
		}
	}
	if r := k.Pod; r != nil {
		if err := t.checkBound(ctx, pods, ns, r, "pod", deletedBefore); err != nil {
			return nil, err
		}
		info.PodName, info.PodUID = r.Name, r.UID
	}
	if r := k.Node; r != nil {
		if k.Pod == nil { // a node-bound token; a pod-bound one just names its node
			if err := t.checkBound(ctx, nodes, "", r, "node", deletedBefore); err != nil {
				return nil, err
			}
		}
		info.NodeName, info.NodeUID = r.Name, r.UID
	}
	if w := k.WarnAfter; w != nil && now.After(w.Time()) {
		audit.AddAnnotation(ctx, "authentication.k8s.io/stale-token",
			fmt.Sprintf("subject: %s, seconds after warning threshold: %d", public.Subject, now.Unix()-w.Time().Unix()))
	}
	return info, nil
}

// checkBound: the object a token is bound to exists, with the token's
// UID, and is not being deleted. The client hears only 401; the log, in
// Kubernetes' words, why.
func (t *Tokens) checkBound(ctx context.Context, gvr schema.GroupVersionResource, ns string, r *ref, kind string, deletedBefore time.Time) error {
	obj, err := t.Objects.Get(ctx, gvr, ns, r.Name)
	if err != nil {
		t.log.Debug("could not retrieve the object a service account token is bound to", "kind", kind, "name", r.Name, "namespace", ns, "err", err)
		return errInvalidated
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return errInvalidated
	}
	if string(m.GetUID()) != r.UID {
		return fmt.Errorf("%s UID (%s) does not match service account %s ref claim (%s)", kind, m.GetUID(), kind, r.UID)
	}
	if deleted(m.GetDeletionTimestamp(), deletedBefore) {
		t.log.Debug("the object a service account token is bound to is deleted and awaiting removal", "kind", kind, "name", r.Name, "namespace", ns)
		return errInvalidated
	}
	return nil
}

func deleted(ts *metav1.Time, before time.Time) bool { return ts != nil && ts.Time.Before(before) }

// userInfo is the user kube-apiserver makes of a service account's token.
func userInfo(info *kubesa.ServiceAccountInfo) authenticationv1.UserInfo {
	u := info.UserInfo()
	out := authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	if extra := u.GetExtra(); len(extra) > 0 {
		out.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range extra {
			out.Extra[k] = v
		}
	}
	return out
}
