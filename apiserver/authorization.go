package apiserver

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// SelfSubjectAccessReview answers "may I?" (`kubectl auth can-i`). It is
// computed, never stored. Until RBAC exists, the authorizer allows
// everything, and the review says so.
var selfSubjectAccessReviewsResource = &Resource{
	GroupVersion: authorizationv1.SchemeGroupVersion, Name: "selfsubjectaccessreviews", Kind: "SelfSubjectAccessReview",
	Verbs:   []string{"create"},
	New:     func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
	NewList: func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
	Virtual: func(ctx context.Context, s *Server, obj runtime.Object) (runtime.Object, error) {
		review := obj.(*authorizationv1.SelfSubjectAccessReview)
		review.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true,
			Reason: "mkube has no authorization yet: every request is allowed"}
		return review, nil
	},
}
