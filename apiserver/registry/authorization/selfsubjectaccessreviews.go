// Package authorization declares authorization.k8s.io/v1's reviews.
package authorization

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
)

// SelfSubjectAccessReviews answer "may I?" (`kubectl auth can-i`). They
// are computed, never stored. Until RBAC exists, the authorizer allows
// everything, and the review says so.
var SelfSubjectAccessReviews = &apiserver.Resource{
	GroupVersion: authorizationv1.SchemeGroupVersion, Name: "selfsubjectaccessreviews", Kind: "SelfSubjectAccessReview",
	Verbs:   []string{"create"},
	New:     func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
	NewList: func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
	Virtual: func(_ context.Context, obj runtime.Object) (runtime.Object, error) {
		review := obj.(*authorizationv1.SelfSubjectAccessReview)
		review.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true,
			Reason: "mkube has no authorization yet: every request is allowed"}
		return review, nil
	},
}
