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

// SelfSubjectRulesReviews list what the asking user may do in a namespace
// (`kubectl auth can-i --list`): the rules of the roles bound to it there
// and cluster-wide. The answer has a status only, as Kubernetes'.
var SelfSubjectRulesReviews = &apiserver.Resource{
	GroupVersion: authorizationv1.SchemeGroupVersion, Name: "selfsubjectrulesreviews", Kind: "SelfSubjectRulesReview",
	Verbs:   []string{"create"},
	New:     func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} },
	NewList: func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} },
	Virtual: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		review := obj.(*authorizationv1.SelfSubjectRulesReview)
		user, ok := authentication.UserFrom(ctx)
		if !ok {
			return nil, apierrors.NewBadRequest("no user present on request")
		}
		if review.Spec.Namespace == "" {
			return nil, apierrors.NewBadRequest("no namespace on request")
		}
		out := &authorizationv1.SelfSubjectRulesReview{TypeMeta: review.TypeMeta}
		resolver, ok := authorization.From(ctx).(authorization.RuleResolver)
		if !ok {
			out.Status.Incomplete = true
			return out, nil
		}
		rules, incomplete, err := resolver.RulesFor(user, review.Spec.Namespace)
		out.Status.Incomplete = incomplete
		if err != nil {
			out.Status.EvaluationError = err.Error()
		}
		for _, r := range rules {
			if len(r.Resources) > 0 {
				out.Status.ResourceRules = append(out.Status.ResourceRules, authorizationv1.ResourceRule{
					Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
			}
			if len(r.NonResourceURLs) > 0 {
				out.Status.NonResourceRules = append(out.Status.NonResourceRules, authorizationv1.NonResourceRule{
					Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
			}
		}
		// Kubernetes answers empty lists, not nulls.
		if out.Status.ResourceRules == nil {
			out.Status.ResourceRules = []authorizationv1.ResourceRule{}
		}
		if out.Status.NonResourceRules == nil {
			out.Status.NonResourceRules = []authorizationv1.NonResourceRule{}
		}
		return out, nil
	},
}
