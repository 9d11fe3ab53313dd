package secureserving

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/delegatedauth"
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
// create TokenReviews and SubjectAccessReviews, keeping the answers
// for k8s.io/apiserver's 10 s (package delegatedauth).
type APIServerReviewer struct{ reviewer *delegatedauth.Reviewer }

// NewAPIServerReviewer is the Reviewer of the component whose client is c.
func NewAPIServerReviewer(c *client.Client) APIServerReviewer {
	return APIServerReviewer{delegatedauth.New(c, clock.RealClock{}, delegatedauth.APIServerTTLs)}
}

func (a APIServerReviewer) ReviewToken(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	return a.reviewer.ReviewToken(ctx, token)
}

func (a APIServerReviewer) ReviewAccess(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	spec := delegatedauth.Spec(user)
	spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: path, Verb: verb}
	return a.reviewer.ReviewAccess(ctx, spec)
}
