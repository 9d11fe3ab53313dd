package delegatedauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// API is what the reviews are sent through: mkube's client.Client, whose
// user must be allowed to create tokenreviews and subjectaccessreviews
// (system:auth-delegator's rules; system:node has them).
type API interface {
	Do(ctx context.Context, method, path string, body, out any) error
}

// TTLs say how long each kind of answer is kept.
type TTLs struct {
	Token   time.Duration // a TokenReview's, authenticated or not
	Allowed time.Duration // an allowing SubjectAccessReview's
	Denied  time.Duration // a denying one's
}

// APIServerTTLs are k8s.io/apiserver's delegating defaults (the
// scheduler's, the controller manager's, metrics-server's): 10 s each.
var APIServerTTLs = TTLs{Token: 10 * time.Second, Allowed: 10 * time.Second, Denied: 10 * time.Second}

// KubeletTTLs are the kubelet's defaults (authentication.webhook.cacheTTL,
// authorization.webhook.cacheAuthorizedTTL and cacheUnauthorizedTTL).
var KubeletTTLs = TTLs{Token: 2 * time.Minute, Allowed: 5 * time.Minute, Denied: 30 * time.Second}

// Reviewer asks the API server, and remembers its answers for the TTLs.
type Reviewer struct {
	api     API
	ttls    TTLs
	tokens  *cache
	reviews *cache
}

// New is a Reviewer asking api, its cache timed by clk.
func New(api API, clk clock.PassiveClock, ttls TTLs) *Reviewer {
	return &Reviewer{api: api, ttls: ttls, tokens: newCache(clk), reviews: newCache(clk)}
}

// ReviewToken is a TokenReview: the user token names, and whether it
// names one. The token is kept only as its hash.
func (r *Reviewer) ReviewToken(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	sum := sha256.Sum256([]byte(token))
	a, err := r.tokens.get(string(sum[:]), func(answer) time.Duration { return r.ttls.Token }, func() (answer, error) {
		review := &authenticationv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
			Spec: authenticationv1.TokenReviewSpec{Token: token}}
		if err := r.api.Do(ctx, http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", review, review); err != nil {
			return answer{}, err
		}
		if !review.Status.Authenticated {
			return answer{}, nil
		}
		return answer{user: &review.Status.User}, nil
	})
	if err != nil || a.user == nil {
		return authenticationv1.UserInfo{}, false, err
	}
	return *a.user, true, nil
}

// ReviewAccess is a SubjectAccessReview of spec: whether its user may do
// what its attributes say, and the authorizer's reason.
func (r *Reviewer) ReviewAccess(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, string, error) {
	key, err := json.Marshal(spec)
	if err != nil {
		return false, "", err
	}
	ttl := func(a answer) time.Duration {
		if a.allowed {
			return r.ttls.Allowed
		}
		return r.ttls.Denied
	}
	a, err := r.reviews.get(string(key), ttl, func() (answer, error) {
		review := &authorizationv1.SubjectAccessReview{TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"}, Spec: spec}
		if err := r.api.Do(ctx, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", review, review); err != nil {
			return answer{}, err
		}
		return answer{allowed: review.Status.Allowed && !review.Status.Denied, reason: review.Status.Reason}, nil
	})
	return a.allowed, a.reason, err
}

// Spec is a SubjectAccessReview's spec for user, without attributes.
func Spec(user authenticationv1.UserInfo) authorizationv1.SubjectAccessReviewSpec {
	spec := authorizationv1.SubjectAccessReviewSpec{User: user.Username, UID: user.UID, Groups: user.Groups}
	for k, v := range user.Extra {
		if spec.Extra == nil {
			spec.Extra = map[string]authorizationv1.ExtraValue{}
		}
		spec.Extra[k] = authorizationv1.ExtraValue(v)
	}
	return spec
}
