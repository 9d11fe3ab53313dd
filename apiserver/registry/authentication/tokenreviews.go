package authentication

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authentication"
)

// TokenReviews answer "whose is this token?" for a service that was handed
// one (a webhook, a metrics server, a pod's own client): the API server
// authenticates spec.token as if a request had carried it, for
// spec.audiences (default: the API server's), and says who it is.
// Computed, never stored.
var TokenReviews = &apiserver.Resource{
	GroupVersion: authenticationv1.SchemeGroupVersion, Name: "tokenreviews", Kind: "TokenReview",
	Verbs:   []string{"create"},
	New:     func() runtime.Object { return &authenticationv1.TokenReview{} },
	NewList: func() runtime.Object { return &authenticationv1.TokenReview{} },
	Virtual: reviewToken,
}

// reviewToken is kube-apiserver's TokenReview REST: the token through the
// bearer-token authenticators, whose answer (or why not) is the status.
func reviewToken(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authenticationv1.TokenReview)
	if review.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	review.Status = authenticationv1.TokenReviewStatus{}
	a := authentication.From(ctx)
	if a == nil {
		return review, nil // no authenticator (the plain port alone): nothing is authenticated
	}
	audiences := review.Spec.Audiences
	if len(audiences) == 0 {
		audiences = a.APIAudiences
	}
	resp, err := a.AuthenticateToken(ctx, review.Spec.Token, audiences)
	if err != nil {
		review.Status.Error = err.Error()
		return review, nil
	}
	review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: resp.User, Audiences: resp.Audiences}
	return review, nil
}
