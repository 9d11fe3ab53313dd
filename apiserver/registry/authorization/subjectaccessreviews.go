package authorization

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authorization"
)

// SubjectAccessReviews answer "may this user?" for any user and groups
// the spec names: what an administrator or a webhook asks.
var SubjectAccessReviews = &apiserver.Resource{
	GroupVersion: authorizationv1.SchemeGroupVersion, Name: "subjectaccessreviews", Kind: "SubjectAccessReview",
	Verbs:   []string{"create"},
	New:     func() runtime.Object { return &authorizationv1.SubjectAccessReview{} },
	NewList: func() runtime.Object { return &authorizationv1.SubjectAccessReview{} },
	Virtual: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		review := obj.(*authorizationv1.SubjectAccessReview)
		errs := append(validateSpec(review.Spec), validateEmptyMeta(review.ObjectMeta, false)...)
		if len(errs) > 0 {
			return nil, invalid("SubjectAccessReview", errs)
		}
		review.Status = decide(ctx, review.Spec)
		return review, nil
	},
}

// LocalSubjectAccessReviews are SubjectAccessReviews within one
// namespace, so that a namespace's admin (the admin role) may ask them.
var LocalSubjectAccessReviews = &apiserver.Resource{
	GroupVersion: authorizationv1.SchemeGroupVersion, Name: "localsubjectaccessreviews", Kind: "LocalSubjectAccessReview",
	Namespaced: true,
	Verbs:      []string{"create"},
	New:        func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} },
	NewList:    func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} },
	Virtual: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		review := obj.(*authorizationv1.LocalSubjectAccessReview)
		errs := append(validateSpec(review.Spec), validateEmptyMeta(review.ObjectMeta, true)...)
		if res := review.Spec.ResourceAttributes; res != nil && res.Namespace != review.Namespace {
			errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), res.Namespace, `must match metadata.namespace`))
		}
		if review.Spec.NonResourceAttributes != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), review.Spec.NonResourceAttributes, `disallowed on this kind of request`))
		}
		if len(errs) > 0 {
			return nil, invalid("LocalSubjectAccessReview", errs)
		}
		// The path's namespace is the one the asker was authorized in.
		a, _ := authorization.AttributesFrom(ctx)
		if a.Namespace == "" {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is required on this type: %v", a.Namespace))
		}
		if a.Namespace != review.Namespace {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", a.Namespace))
		}
		review.Status = decide(ctx, review.Spec)
		return review, nil
	},
}

// validateSpec: one question, about somebody.
func validateSpec(spec authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	errs := validateAttributes(spec.ResourceAttributes, spec.NonResourceAttributes)
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "user"), spec.User, `at least one of user or group must be specified`))
	}
	return errs
}

// decide asks the server's authorizer about the spec's user.
func decide(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) authorizationv1.SubjectAccessReviewStatus {
	user := authenticationv1.UserInfo{Username: spec.User, UID: spec.UID, Groups: spec.Groups}
	if len(spec.Extra) > 0 {
		user.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range spec.Extra {
			user.Extra[k] = authenticationv1.ExtraValue(v)
		}
	}
	return statusOf(authorization.From(ctx).Authorize(ctx, attributesOf(user, spec.ResourceAttributes, spec.NonResourceAttributes)))
}
