package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/admission/predicates"
	"github.com/mkube/mkube/apiserver/authentication"
)

// MutatingAdmissionPolicies change the writes their bound policies
// match, before the mutating webhooks see them, as Kubernetes'
// MutatingAdmissionPolicy plugin: each mutation, in order, is a CEL
// expression that yields an apply configuration (merged into the object
// as server-side apply merges, by the kind's schema) or a JSON patch;
// the result is read back as the kind's own and defaulted. A mutation
// that fails refuses the request if the policy's failurePolicy is Fail:
//
//	policy 'p' with binding 'b' denied request: ...
//
// Not done: parameters (paramKind), and reinvocation (IfNeeded policies
// run once).

// mutatingPolicy is a MutatingAdmissionPolicy, compiled.
type mutatingPolicy struct {
	policy     *admissionregistrationv1.MutatingAdmissionPolicy
	compiler   *plugincel.CompositedCompiler // nil if it could not be built
	conditions matchconditions.Matcher
	patchers   []patch.Patcher
	match      *matcher
}

type mutatingBinding struct {
	b     *admissionregistrationv1.MutatingAdmissionPolicyBinding
	match *matcher
}

type boundMutating struct {
	*mutatingPolicy
	bindings []*mutatingBinding
}

// compileMutating is Kubernetes' compilePolicy for mutating policies.
func compileMutating(p *admissionregistrationv1.MutatingAdmissionPolicy) *mutatingPolicy {
	out := &mutatingPolicy{policy: p, match: newMatcher(p.Spec.MatchConstraints)}
	compiler, err := plugincel.NewCompositedCompiler(envSet())
	if err != nil {
		return out
	}
	out.compiler = compiler
	decls := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	vars := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		vars[i] = &validatingpolicy.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(vars, decls, environment.StoredExpressions)
	if len(p.Spec.MatchConditions) > 0 {
		exprs := make([]plugincel.ExpressionAccessor, len(p.Spec.MatchConditions))
		for i, mc := range p.Spec.MatchConditions {
			exprs[i] = &matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression}
		}
		out.conditions = matchconditions.NewMatcher(compiler.CompileCondition(exprs, decls, environment.StoredExpressions),
			p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	patchDecls := decls
	patchDecls.HasPatchTypes = true
	for _, m := range p.Spec.Mutations {
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			out.patchers = append(out.patchers, patch.NewJSONPatcher(compiler.CompileMutatingEvaluator(
				&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patchDecls, environment.StoredExpressions)))
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			out.patchers = append(out.patchers, patch.NewApplyConfigurationPatcher(compiler.CompileMutatingEvaluator(
				&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, patchDecls, environment.StoredExpressions)))
		}
	}
	return out
}

// mutatingSource is the mutating policies and their bindings, kept
// current by the API server as source is.
type mutatingSource struct {
	mu       sync.Mutex
	policies map[string]*mutatingPolicy
	bindings map[string]*mutatingBinding
	bound    atomic.Pointer[[]*boundMutating]
}

func (s *mutatingSource) publish() {
	byPolicy := map[string][]*mutatingBinding{}
	for _, b := range s.bindings {
		byPolicy[b.b.Spec.PolicyName] = append(byPolicy[b.b.Spec.PolicyName], b)
	}
	var out []*boundMutating
	for name, p := range s.policies {
		if bs := byPolicy[name]; len(bs) > 0 {
			sort.Slice(bs, func(i, j int) bool { return bs[i].b.Name < bs[j].b.Name })
			out = append(out, &boundMutating{mutatingPolicy: p, bindings: bs})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].policy.Name < out[j].policy.Name })
	s.bound.Store(&out)
}

func (s *mutatingSource) list() []*boundMutating {
	if l := s.bound.Load(); l != nil {
		return *l
	}
	return nil
}

// change applies one change to the policies (policy true) or bindings:
// obj nil deletes prev; objs, if not nil, replaces them all.
func (s *mutatingSource) change(policy bool, objs []runtime.Object, obj, prev runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.policies == nil {
		s.policies, s.bindings = map[string]*mutatingPolicy{}, map[string]*mutatingBinding{}
	}
	put := func(o runtime.Object) {
		switch v := o.(type) {
		case *admissionregistrationv1.MutatingAdmissionPolicy:
			s.policies[v.Name] = compileMutating(v)
		case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
			b := &mutatingBinding{b: v}
			if v.Spec.MatchResources != nil {
				b.match = newMatcher(v.Spec.MatchResources)
			}
			s.bindings[v.Name] = b
		}
	}
	switch {
	case objs != nil && policy:
		s.policies = map[string]*mutatingPolicy{}
		for _, o := range objs {
			put(o)
		}
	case objs != nil:
		s.bindings = map[string]*mutatingBinding{}
		for _, o := range objs {
			put(o)
		}
	case obj != nil:
		put(obj)
	case policy:
		delete(s.policies, prev.(*admissionregistrationv1.MutatingAdmissionPolicy).Name)
	default:
		delete(s.bindings, prev.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Name)
	}
	s.publish()
}

type mutatingFollower struct {
	s      *mutatingSource
	policy bool
}

func (f mutatingFollower) Replace(objs []runtime.Object) {
	if objs == nil {
		objs = []runtime.Object{}
	}
	f.s.change(f.policy, objs, nil, nil)
}
func (f mutatingFollower) Update(obj, prev runtime.Object) { f.s.change(f.policy, nil, obj, prev) }

// Mutator applies the bound MutatingAdmissionPolicies it is fed.
type Mutator struct {
	src mutatingSource
	log *slog.Logger
}

// NewMutator is a mutator without policies; feed it with Server.Follow.
func NewMutator(log *slog.Logger) *Mutator {
	if log == nil {
		log = slog.Default()
	}
	return &Mutator{log: log}
}

// Policies is where the MutatingAdmissionPolicies go.
func (m *Mutator) Policies() Follower { return mutatingFollower{&m.src, true} }

// Bindings is where the MutatingAdmissionPolicyBindings go.
func (m *Mutator) Bindings() Follower { return mutatingFollower{&m.src, false} }

// The schemas mutations are merged by: client-go's for the built-in
// kinds; for custom resources (unstructured), deduced from the object.
var (
	builtinTypes = sync.OnceValue(func() managedfields.TypeConverter {
		return applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
	})
	deducedTypes   = managedfields.NewDeducedTypeConverter()
	builtinObjects = k8sadmission.NewObjectInterfacesFromScheme(clientgoscheme.Scheme)
)

// Admit applies every bound policy that matches a to a.Object, in
// policy name order, each binding once.
func (m *Mutator) Admit(ctx context.Context, a *admission.Attributes, c predicates.Cluster) error {
	if a.Object == nil || a.Operation == admission.Delete || a.Kind.Group == admissionregistrationv1.GroupName && exemptKinds.Has(a.Kind.Kind) {
		return nil
	}
	policies := m.src.list()
	if len(policies) == 0 {
		return nil
	}
	user, _ := authentication.UserFrom(ctx)
	ns := &predicates.NamespaceReader{Cluster: c, A: a}
	var failed []string // failures of Fail policies, in Kubernetes' words
	fail := func(p *mutatingPolicy, b *mutatingBinding, err error) {
		if p.policy.Spec.FailurePolicy != nil && *p.policy.Spec.FailurePolicy == admissionregistrationv1.Ignore {
			return
		}
		failed = append(failed, fmt.Sprintf("policy '%s' with binding '%s' denied request: %v", p.policy.Name, b.b.Name, err))
	}
	for _, p := range policies {
		gvr, kind, ok, err := p.match.matches(ctx, a, ns, c)
		if err != nil || !ok || p.compiler == nil {
			continue // a policy that cannot be matched applies to nothing
		}
		for _, b := range p.bindings {
			if b.match != nil {
				if _, _, ok, err := b.match.matches(ctx, a, ns, c); err != nil || !ok {
					continue
				}
			}
			if p.policy.Spec.ParamKind != nil {
				fail(p.mutatingPolicy, b, errors.New("mkube does not read the parameters of policies"))
				continue
			}
			if err := m.apply(ctx, p.mutatingPolicy, b, a, gvr, kind, user, ns); err != nil {
				var st *apierrors.StatusError
				if errors.As(err, &st) {
					return st
				}
				fail(p.mutatingPolicy, b, err)
			}
		}
	}
	if len(failed) == 0 {
		return nil
	}
	// Kubernetes' words: a Forbidden (403) whose message is the first
	// failure's, with the reason Invalid, and every failure a cause.
	err := apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, errors.New("admission request denied by policy"))
	err.ErrStatus.Message, err.ErrStatus.Reason = failed[0], metav1.StatusReasonInvalid
	for _, f := range failed {
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Message: f})
	}
	return err
}

// apply runs one binding's mutations of policy p on a.Object.
func (m *Mutator) apply(ctx context.Context, p *mutatingPolicy, b *mutatingBinding, a *admission.Attributes, gvr schema.GroupVersionResource, kind schema.GroupVersionKind,
	user authenticationv1.UserInfo, ns *predicates.NamespaceReader) error {
	va, err := predicates.CELAttributes(a, kind, user)
	if err != nil {
		return err
	}
	ctx = p.compiler.CreateContext(ctx)
	if p.conditions != nil {
		res := p.conditions.Match(ctx, va, nil, nil)
		if res.Error != nil {
			return res.Error
		}
		if !res.Matches {
			return nil
		}
	}
	namespace, err := ns.Get(ctx)
	if a.Kind.Group == "" && a.Kind.Kind == "Namespace" {
		namespace, err = nil, nil
	}
	if err != nil {
		return err
	}
	types := builtinTypes()
	if _, custom := a.Object.(*unstructured.Unstructured); custom {
		types = deducedTypes
	}
	for _, patcher := range p.patchers {
		next, err := patcher.Patch(ctx, patch.Request{MatchedResource: gvr, VersionedAttributes: va, ObjectInterfaces: builtinObjects,
			Namespace: namespace, TypeConverter: types}, celconfig.RuntimeCELCostBudget)
		if err != nil {
			return err
		}
		if err := m.replace(a, next); err != nil {
			return apierrors.NewInternalError(err)
		}
		va.UpdateObject(a.Object)
	}
	m.log.Info("admission policy mutated the object", "policy", p.policy.Name, "binding", b.b.Name,
		"resource", gvr.String(), "object", predicates.Namespace(a)+"/"+a.Name)
	return nil
}

// replace reads the mutated object back as the kind's own (decoded,
// defaulted) into a.Object, which the storage holds.
func (m *Mutator) replace(a *admission.Attributes, next runtime.Object) error {
	if a.Reread == nil {
		return fmt.Errorf("a %s cannot be mutated", a.Kind.Kind)
	}
	data, err := json.Marshal(next)
	if err != nil {
		return err
	}
	obj, err := a.Reread(data)
	if err != nil {
		return err
	}
	dv, sv := reflect.ValueOf(a.Object), reflect.ValueOf(obj)
	if dv.Type() != sv.Type() || dv.Kind() != reflect.Pointer {
		return fmt.Errorf("a mutated %T cannot replace a %T", obj, a.Object)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}
