// Package policy evaluates ValidatingAdmissionPolicies: the
// ValidatingAdmissionPolicy plugin of the admission chain
// (apiserver/admission/webhooks.go), as Kubernetes'
// k8s.io/apiserver/pkg/admission/plugin/policy/validating does. A policy
// is CEL validations of the writes its matchConstraints select; it does
// nothing until a ValidatingAdmissionPolicyBinding binds it, narrowing
// what it applies to (matchResources) and saying what a failed
// validation does (validationActions: Deny, Warn, Audit). For one write:
//
//  1. each bound policy whose matchConstraints match the request (rules
//     with resourceNames, excludeResourceRules, namespace and object
//     selectors, matchPolicy Equivalent) and each of its bindings whose
//     matchResources match it;
//
//  2. the policy's matchConditions, variables and validations are
//     evaluated with Kubernetes' own CEL libraries, over object,
//     oldObject, request, namespaceObject and variables;
//
//  3. a validation that is false (or fails to evaluate, with
//     failurePolicy Fail) is a refusal if the binding says Deny, a
//     warning if it says Warn:
//
//     deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: wants replicas > 1, got 1
//
// MutatingAdmissionPolicies are applied the same way, before the mutating
// webhooks (mutate.go).
//
// Policies with a paramKind are not evaluated: mkube does not read their
// parameter objects, so such a binding fails as its failurePolicy says.
// Audit annotations are not recorded, and the policies' status (type
// checking) is not written.
//
// Where things live:
//
//	file         what it holds
//	evaluate.go  the Evaluator: what follows the policies and bindings (Follower), and the evaluation of a request against them
//	source.go    ValidatingAdmissionPolicies compiled, and the bindings that bind them
//	mutate.go    MutatingAdmissionPolicies: compiled, bound and applied
package policy

import (
	"sort"
	"sync"
	"sync/atomic"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// compiled is a policy ready to evaluate: its expressions compiled and
// its selectors parsed once, when it is stored.
type compiled struct {
	policy    *admissionregistrationv1.ValidatingAdmissionPolicy
	validator validatingpolicy.Validator
	match     *matcher
}

// bound is a policy with the bindings that bind it, in name order.
type bound struct {
	*compiled
	bindings []*binding
}

type binding struct {
	b     *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	match *matcher // nil: everything the policy matches
}

// envSet is Kubernetes' CEL environment, built once (it takes
// milliseconds), on the first policy.
var envSet = sync.OnceValue(func() *environment.EnvSet {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
})

// compile is Kubernetes' compilePolicy: one compiler per policy that
// knows its variables, and the validations, messages, audit
// annotations and match conditions compiled with it.
func compile(p *admissionregistrationv1.ValidatingAdmissionPolicy) *compiled {
	c := &compiled{policy: p, match: newMatcher(p.Spec.MatchConstraints)}
	hasParams := p.Spec.ParamKind != nil
	decls := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(envSet())
	if err != nil {
		c.validator = validatingpolicy.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err)
		return c
	}
	vars := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		vars[i] = &validatingpolicy.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(vars, decls, environment.StoredExpressions)
	var conditions matchconditions.Matcher
	if len(p.Spec.MatchConditions) > 0 {
		exprs := make([]plugincel.ExpressionAccessor, len(p.Spec.MatchConditions))
		for i, mc := range p.Spec.MatchConditions {
			exprs[i] = &matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression}
		}
		conditions = matchconditions.NewMatcher(compiler.CompileCondition(exprs, decls, environment.StoredExpressions),
			p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	validations := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		validations[i] = &validatingpolicy.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validatingpolicy.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	audits := make([]plugincel.ExpressionAccessor, len(p.Spec.AuditAnnotations))
	for i, a := range p.Spec.AuditAnnotations {
		audits[i] = &validatingpolicy.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	c.validator = validatingpolicy.NewValidator(
		compiler.CompileCondition(validations, decls, environment.StoredExpressions),
		conditions,
		compiler.CompileCondition(audits, decls, environment.StoredExpressions),
		compiler.CompileCondition(messages, plugincel.OptionalVariableDeclarations{HasParams: hasParams}, environment.StoredExpressions),
		p.Spec.FailurePolicy, nil)
	return c
}

// source is the policies and bindings, kept current by the API server
// (it feeds Policies and Bindings from its watch cache). Requests read
// the bound policies without a lock: each change builds the list anew.
type source struct {
	mu       sync.Mutex // orders changes
	policies map[string]*compiled
	bindings map[string]*binding
	bound    atomic.Pointer[[]*bound]
}

func newSource() *source {
	s := &source{policies: map[string]*compiled{}, bindings: map[string]*binding{}}
	s.bound.Store(&[]*bound{})
	return s
}

// publish pairs each policy with its bindings, policies in name order.
func (s *source) publish() {
	byPolicy := map[string][]*binding{}
	for _, b := range s.bindings {
		byPolicy[b.b.Spec.PolicyName] = append(byPolicy[b.b.Spec.PolicyName], b)
	}
	var out []*bound
	for name, p := range s.policies {
		bs := byPolicy[name]
		if len(bs) == 0 {
			continue // unbound: it does nothing
		}
		sort.Slice(bs, func(i, j int) bool { return bs[i].b.Name < bs[j].b.Name })
		out = append(out, &bound{compiled: p, bindings: bs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].policy.Name < out[j].policy.Name })
	s.bound.Store(&out)
}

func (s *source) list() []*bound { return *s.bound.Load() }

// policyFollower and bindingFollower are what the API server feeds.
type policyFollower struct{ s *source }
type bindingFollower struct{ s *source }

func (f policyFollower) Replace(objs []runtime.Object) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.s.policies = map[string]*compiled{}
	for _, o := range objs {
		p := o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		f.s.policies[p.Name] = compile(p)
	}
	f.s.publish()
}

func (f policyFollower) Update(obj, prev runtime.Object) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if obj == nil {
		delete(f.s.policies, prev.(*admissionregistrationv1.ValidatingAdmissionPolicy).Name)
	} else {
		p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		f.s.policies[p.Name] = compile(p)
	}
	f.s.publish()
}

func newBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) *binding {
	out := &binding{b: b}
	if b.Spec.MatchResources != nil {
		out.match = newMatcher(b.Spec.MatchResources)
	}
	return out
}

func (f bindingFollower) Replace(objs []runtime.Object) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.s.bindings = map[string]*binding{}
	for _, o := range objs {
		b := o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		f.s.bindings[b.Name] = newBinding(b)
	}
	f.s.publish()
}

func (f bindingFollower) Update(obj, prev runtime.Object) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if obj == nil {
		delete(f.s.bindings, prev.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Name)
	} else {
		b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		f.s.bindings[b.Name] = newBinding(b)
	}
	f.s.publish()
}

// matcher is a MatchResources, its selectors parsed.
type matcher struct {
	m                 *admissionregistrationv1.MatchResources
	namespaceSelector labels.Selector
	objectSelector    labels.Selector
	err               error
}

func newMatcher(m *admissionregistrationv1.MatchResources) *matcher {
	out := &matcher{m: m, namespaceSelector: labels.Everything(), objectSelector: labels.Everything()}
	if m == nil {
		return out
	}
	var err error
	if m.NamespaceSelector != nil {
		if out.namespaceSelector, err = metav1.LabelSelectorAsSelector(m.NamespaceSelector); err != nil {
			out.err = err
		}
	}
	if m.ObjectSelector != nil {
		if out.objectSelector, err = metav1.LabelSelectorAsSelector(m.ObjectSelector); err != nil {
			out.err = err
		}
	}
	return out
}
