// Package authentication declares authentication.k8s.io/v1's reviews.
//
// Where things live:
//
//	file                   what it holds
//	selfsubjectreviews.go  SelfSubjectReviews: who the server takes the sender to be (kubectl auth whoami)
//	tokenreviews.go        TokenReviews: who a bearer token names, asked of the server's authenticator
package authentication

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authentication"
)

// SelfSubjectReviews answer "who am I?" (`kubectl auth whoami`): the user
// and groups the API server took the request's sender for. Computed,
// never stored.
var SelfSubjectReviews = &apiserver.Resource{
	GroupVersion: authenticationv1.SchemeGroupVersion, Name: "selfsubjectreviews", Kind: "SelfSubjectReview",
	Verbs:   []string{"create"},
	New:     func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
	NewList: func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
	Virtual: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		review := obj.(*authenticationv1.SelfSubjectReview)
		review.Status.UserInfo, _ = authentication.UserFrom(ctx)
		return review, nil
	},
}
