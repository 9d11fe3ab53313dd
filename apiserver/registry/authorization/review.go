// Package authorization declares authorization.k8s.io/v1's reviews, the
// questions `kubectl auth can-i` asks: may this user do that? They are
// computed, never stored, by asking the server's own authorizer, the one
// that decides every request.
//
// Where things live:
//
//	file                         what it holds
//	subjectaccessreviews.go      SubjectAccessReviews and LocalSubjectAccessReviews: may this user do that?
//	selfsubjectaccessreviews.go  SelfSubjectAccessReviews: may I? (kubectl auth can-i)
//	selfsubjectrulesreviews.go   SelfSubjectRulesReviews: what may I do in this namespace? (kubectl auth can-i --list)
//	review.go                    what the reviews share: a review's attributes, its status from a decision, its validation
package authorization

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver/authorization"
)

// attributesOf is what a review asks about, for user: a resource (an
// empty version matches any) or a path.
func attributesOf(user authenticationv1.UserInfo, res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) authorization.Attributes {
	if res == nil {
		return authorization.Attributes{User: user, Verb: nonRes.Verb, Path: nonRes.Path}
	}
	version := res.Version
	if version == "" {
		version = "*"
	}
	return authorization.Attributes{User: user, Verb: res.Verb, ResourceRequest: true, APIGroup: res.Group, APIVersion: version,
		Resource: res.Resource, Subresource: res.Subresource, Namespace: res.Namespace, Name: res.Name}
}

// statusOf is the answer: allowed, denied (no authorizer in mkube denies
// outright) and why.
func statusOf(d authorization.Decision, reason string, err error) authorizationv1.SubjectAccessReviewStatus {
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == authorization.Allow, Denied: d == authorization.Deny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

// validateAttributes: exactly one of the two kinds of question.
func validateAttributes(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if res != nil && nonRes != nil {
		errs = append(errs, field.Invalid(spec.Child("nonResourceAttributes"), nonRes, `cannot be specified in combination with resourceAttributes`))
	}
	if res == nil && nonRes == nil {
		errs = append(errs, field.Invalid(spec.Child("resourceAttributes"), nonRes, `exactly one of nonResourceAttributes or resourceAttributes must be specified`))
	}
	return errs
}

// validateEmptyMeta: a review has no metadata of its own (but for a
// LocalSubjectAccessReview's namespace).
func validateEmptyMeta(m metav1.ObjectMeta, exceptNamespace bool) field.ErrorList {
	m.ManagedFields = nil
	msg := "must be empty"
	if exceptNamespace {
		m.Namespace = ""
		msg = "must be empty except for namespace"
	}
	if !equality.Semantic.DeepEqual(metav1.ObjectMeta{}, m) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), m, msg)}
	}
	return nil
}

func invalid(kind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: authorizationv1.GroupName, Kind: kind}, "", errs)
}
