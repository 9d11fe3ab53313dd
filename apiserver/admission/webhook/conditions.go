package webhook

import (
	"context"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/mkube/mkube/apiserver/admission/predicates"
)

// A webhook's matchConditions are CEL expressions over the request
// (object, oldObject, request, authorizer): the webhook is called only if
// every one is true, so a webhook can skip, say, configmaps named
// "skip-me" without being called for them:
//
//	matchConditions:
//	- name: skip-me
//	  expression: object.metadata.name != 'skip-me'
//
// They are compiled and evaluated with Kubernetes' own CEL libraries
// (k8s.io/apiserver's matchconditions), with its cost budget. An
// expression that fails to evaluate counts as its failurePolicy says:
// Fail refuses the request (403), Ignore skips the webhook. The
// authorizer variable has no authorizer behind it here: an expression
// that asks it fails to evaluate.

// conditions are a webhook's compiled match conditions.
type conditions struct{ matcher matchconditions.Matcher }

// conditionCompiler is Kubernetes' CEL environment, built once (it takes
// milliseconds) on the first configuration that has conditions.
var conditionCompiler = sync.OnceValue(func() plugincel.ConditionCompiler {
	return plugincel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
})

// compileConditions compiles mcs as stored expressions (validation
// compiled them as new ones when they were written); nil if none.
func compileConditions(mcs []admissionregistrationv1.MatchCondition, failure *admissionregistrationv1.FailurePolicyType) *conditions {
	if len(mcs) == 0 {
		return nil
	}
	exprs := make([]plugincel.ExpressionAccessor, len(mcs))
	for i, mc := range mcs {
		exprs[i] = &matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression}
	}
	eval := conditionCompiler().CompileCondition(exprs, plugincel.OptionalVariableDeclarations{HasAuthorizer: true},
		environment.StoredExpressions)
	return &conditions{matcher: matchconditions.NewMatcher(eval, failure, "webhook", "admit", "")}
}

// match evaluates the conditions on the request as the webhook would be
// sent it (inv: its resource and kind). An error is the request's end.
func (c *conditions) match(ctx context.Context, r *request, inv *invocation) (bool, error) {
	va, err := predicates.CELAttributes(r.a, inv.kind, r.user)
	if err != nil {
		return false, err
	}
	res := c.matcher.Match(ctx, va, nil, nil)
	return res.Matches, res.Error
}
