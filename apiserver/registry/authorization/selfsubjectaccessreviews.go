package authorization

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization"
)

// SelfSubjectAccessReviews answer "may I?" for the user who asks
// (`kubectl auth can-i create pods`).
var SelfSubjectAccessReviews = &apiserver.Resource{
	GroupVersion: authorizationv1.SchemeGroupVersion, Name: "selfsubjectaccessreviews", Kind: "SelfSubjectAccessReview",
	Verbs:   []string{"create"},
	New:     func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
	NewList: func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
	Virtual: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		review := obj.(*authorizationv1.SelfSubjectAccessReview)
		spec := review.Spec
		errs := append(validateAttributes(spec.ResourceAttributes, spec.NonResourceAttributes), validateEmptyMeta(review.ObjectMeta, false)...)
		if len(errs) > 0 {
			return nil, invalid("SelfSubjectAccessReview", errs)
		}
		user, ok := authentication.UserFrom(ctx)
		if !ok {
			return nil, apierrors.NewBadRequest("no user present on request")
		}
		review.Status = statusOf(authorization.From(ctx).Authorize(ctx, attributesOf(user, spec.ResourceAttributes, spec.NonResourceAttributes)))
		return review, nil
	},
}
