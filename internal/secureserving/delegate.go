package secureserving

import (
	"context"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
)

// Reviewer answers, for a component, the two questions its port delegates
// to the API server, as k8s.io/apiserver's DelegatingAuthenticationOptions
// and DelegatingAuthorizationOptions do.
type Reviewer interface {
	// ReviewToken is a TokenReview: whom a bearer token names, if anyone.
	ReviewToken(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error)
	// ReviewAccess is a SubjectAccessReview of a non-resource URL: may
	// user do verb on path?
	ReviewAccess(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (allowed bool, reason string, err error)
}

// APIServerReviewer asks the API server through the component's client,
// whose user (system:kube-scheduler, system:kube-controller-manager) may
// create TokenReviews and SubjectAccessReviews.
type APIServerReviewer struct{ Client *client.Client }

func (a APIServerReviewer) ReviewToken(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	review := &authenticationv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
		Spec: authenticationv1.TokenReviewSpec{Token: token}}
	if err := a.Client.Do(ctx, http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", review, review); err != nil {
		return authenticationv1.UserInfo{}, false, err
	}
	return review.Status.User, review.Status.Authenticated, nil
}

func (a APIServerReviewer) ReviewAccess(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	review := &authorizationv1.SubjectAccessReview{TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"},
		Spec: authorizationv1.SubjectAccessReviewSpec{User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb}}}
	if err := a.Client.Do(ctx, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", review, review); err != nil {
		return false, "", err
	}
	return review.Status.Allowed, review.Status.Reason, nil
}
