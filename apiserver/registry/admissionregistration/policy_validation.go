package admissionregistration

import (
	"fmt"
	"regexp"
	"strings"

	celgo "github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
)

// policyExpressions are the expressions a stored policy already had, by
// role, so that an update compiles them in the StoredExpressions
// environment (cel.go).
type policyExpressions struct{ matchConditions, validations, messages, audits, mutations sets.Set[string] }

func newPolicyExpressions() policyExpressions {
	return policyExpressions{sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string](), sets.New[string]()}
}

func validateValidatingAdmissionPolicy(p, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	stored, ignoreMatchConditions := newPolicyExpressions(), false
	if old != nil {
		ignoreMatchConditions = apiequality.Semantic.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) &&
			apiequality.Semantic.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
		for _, mc := range old.Spec.MatchConditions {
			stored.matchConditions.Insert(mc.Expression)
		}
		for _, v := range old.Spec.Validations {
			stored.validations.Insert(v.Expression)
			stored.messages.Insert(v.MessageExpression)
		}
		for _, a := range old.Spec.AuditAnnotations {
			stored.audits.Insert(a.ValueExpression)
		}
	}
	spec, path := &p.Spec, field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateFailurePolicy(spec.FailurePolicy, path.Child("failurePolicy"))...)
	hasParams := spec.ParamKind != nil
	if hasParams {
		errs = append(errs, validateParamKind(*spec.ParamKind, path.Child("paramKind"))...)
	}
	errs = append(errs, validateMatchConstraints(spec.MatchConstraints, path.Child("matchConstraints"), nil)...)
	if !ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(spec.MatchConditions, hasParams, stored.matchConditions, path.Child("matchConditions"))...)
	}
	// With variables, the expressions after them may refer to them, so
	// they are compiled together by one compiler that remembers them.
	compiler := statelessCompiler()
	if len(spec.Variables) > 0 {
		compiler = newCompositedCompiler()
	}
	decls := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	for i, v := range spec.Variables {
		errs = append(errs, validateVariable(compiler, v, decls, stored.validations, path.Child("variables").Index(i))...)
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		errs = append(errs, field.Required(path.Child("validations"), "validations or auditAnnotations must contain at least one item"),
			field.Required(path.Child("auditAnnotations"), "validations or auditAnnotations must contain at least one item"))
		return errs
	}
	for i, v := range spec.Validations {
		errs = append(errs, validateValidation(compiler, v, hasParams, stored, path.Child("validations").Index(i))...)
	}
	if len(spec.AuditAnnotations) > 20 {
		errs = append(errs, field.Invalid(path.Child("auditAnnotations"), spec.AuditAnnotations, "must not have more than 20 auditAnnotations"))
	}
	keys := sets.New[string]()
	for i, a := range spec.AuditAnnotations {
		ap := path.Child("auditAnnotations").Index(i)
		errs = append(errs, validateAuditAnnotation(compiler, p.Name, a, decls, stored.audits, ap)...)
		if keys.Has(a.Key) {
			errs = append(errs, field.Duplicate(ap.Child("key"), a.Key))
		}
		keys.Insert(a.Key)
	}
	return errs
}

func validateMutatingAdmissionPolicy(p, old *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	stored, ignoreMatchConditions := newPolicyExpressions(), false
	if old != nil {
		ignoreMatchConditions = apiequality.Semantic.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) &&
			apiequality.Semantic.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
		for _, mc := range old.Spec.MatchConditions {
			stored.matchConditions.Insert(mc.Expression)
		}
		for _, m := range old.Spec.Mutations {
			if m.ApplyConfiguration != nil {
				stored.mutations.Insert(m.ApplyConfiguration.Expression)
			}
			if m.JSONPatch != nil {
				stored.mutations.Insert(m.JSONPatch.Expression)
			}
		}
	}
	spec, path := &p.Spec, field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateFailurePolicy(spec.FailurePolicy, path.Child("failurePolicy"))...)
	hasParams := spec.ParamKind != nil
	if hasParams {
		errs = append(errs, validateParamKind(*spec.ParamKind, path.Child("paramKind"))...)
	}
	// A mutation happens on create and update only (and connect, whose
	// options it may change): never on a delete.
	errs = append(errs, validateMatchConstraints(spec.MatchConstraints, path.Child("matchConstraints"), mutatingOperations)...)
	if !ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(spec.MatchConditions, hasParams, stored.matchConditions, path.Child("matchConditions"))...)
	}
	compiler := newCompositedCompiler()
	decls := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	for i, v := range spec.Variables {
		errs = append(errs, validateVariable(compiler, v, decls, stored.validations, path.Child("variables").Index(i))...)
	}
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(path.Child("mutations"), "mutations must contain at least one item"))
	}
	for i, m := range spec.Mutations {
		errs = append(errs, validateMutation(compiler, m, hasParams, stored.mutations, path.Child("mutations").Index(i))...)
	}
	switch rp := spec.ReinvocationPolicy; {
	case rp == "":
		errs = append(errs, field.Required(path.Child("reinvocationPolicy"), ""))
	case !supportedReinvocation.Has(string(rp)):
		errs = append(errs, field.NotSupported(path.Child("reinvocationPolicy"), rp, sets.List(supportedReinvocation)))
	}
	return errs
}

var mutatingOperations = sets.New(string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Create),
	string(admissionregistrationv1.Update), string(admissionregistrationv1.Connect))

func validateMutation(c plugincel.Compiler, m admissionregistrationv1.Mutation, hasParams bool, stored sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	decls := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true, HasPatchTypes: true}
	switch m.PatchType {
	case "":
		errs = append(errs, field.Required(path.Child("patchType"), ""))
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(path.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else {
			errs = append(errs, validateMutationExpression(c, m.JSONPatch.Expression, jsonPatchList, decls, stored, path.Child("jsonPatch"))...)
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(path.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(path.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else {
			errs = append(errs, validateMutationExpression(c, m.ApplyConfiguration.Expression, applyResult, decls, stored, path.Child("applyConfiguration"))...)
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(path.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("patchType"), m.PatchType,
			[]string{string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch)}))
	}
	return errs
}

func validateMutationExpression(c plugincel.Compiler, text string, returns []*celgo.Type, decls plugincel.OptionalVariableDeclarations,
	stored sets.Set[string], path *field.Path) field.ErrorList {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return field.ErrorList{field.Required(path.Child("expression"), "")}
	}
	return compileErrors(c, expression{trimmed, returns}, decls, envFor(text, stored), path.Child("expression"))
}

func validateFailurePolicy(fp *admissionregistrationv1.FailurePolicyType, path *field.Path) field.ErrorList {
	switch {
	case fp == nil:
		return field.ErrorList{field.Required(path, "")}
	case !supportedFailurePolicies.Has(string(*fp)):
		return field.ErrorList{field.NotSupported(path, *fp, sets.List(supportedFailurePolicies))}
	}
	return nil
}

// validateParamKind: the kind of a policy's parameters is
// "<group>/<version>" and a kind name.
func validateParamKind(pk admissionregistrationv1.ParamKind, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	av := path.Child("apiVersion")
	if pk.APIVersion == "" {
		errs = append(errs, field.Required(av, ""))
	} else if strings.Count(pk.APIVersion, "/") > 1 {
		errs = append(errs, field.Invalid(av, pk.APIVersion, fmt.Sprintf("unexpected GroupVersion string: %v", pk.APIVersion)))
	} else {
		group, version, ok := strings.Cut(pk.APIVersion, "/")
		if !ok {
			group, version = "", pk.APIVersion
		}
		if group != "" {
			if msgs := utilvalidation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(av, group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, field.Invalid(av, pk.APIVersion, "version must be specified"))
		} else if msgs := utilvalidation.IsDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(av, version, strings.Join(msgs, ",")))
		}
	}
	if pk.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), ""))
	} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

// validateMatchConstraints: a policy's constraints are required and name
// at least one resource rule, which gives its expressions their types.
func validateMatchConstraints(m *admissionregistrationv1.MatchResources, path *field.Path, ops sets.Set[string]) field.ErrorList {
	if m == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	errs := validateMatchResources(m, path)
	if len(m.ResourceRules) == 0 {
		errs = append(errs, field.Required(path.Child("resourceRules"), ""))
	}
	errs = append(errs, validateMutatingOperations(m, ops, path.Child("resourceRules", "operations"))...)
	return errs
}

func validateMutatingOperations(m *admissionregistrationv1.MatchResources, ops sets.Set[string], path *field.Path) field.ErrorList {
	if ops == nil || m == nil {
		return nil
	}
	var errs field.ErrorList
	for _, r := range m.ResourceRules {
		for _, op := range r.Operations {
			if !ops.Has(string(op)) {
				errs = append(errs, field.NotSupported(path, op, sets.List(ops)))
			}
		}
	}
	return errs
}

// validateMatchResources: selectors are required (defaulting fills
// them) and validated strictly, rules as a webhook's, with resource
// names as path segments.
func validateMatchResources(m *admissionregistrationv1.MatchResources, path *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	switch mp := m.MatchPolicy; {
	case mp == nil:
		errs = append(errs, field.Required(path.Child("matchPolicy"), ""))
	case !supportedMatchPolicies.Has(string(*mp)):
		errs = append(errs, field.NotSupported(path.Child("matchPolicy"), *mp, sets.List(supportedMatchPolicies)))
	}
	for _, sel := range []struct {
		name string
		s    *metav1.LabelSelector
	}{{"namespaceSelector", m.NamespaceSelector}, {"objectSelector", m.ObjectSelector}} {
		if sel.s == nil {
			errs = append(errs, field.Required(path.Child(sel.name), ""))
		} else {
			errs = append(errs, metav1validation.ValidateLabelSelector(sel.s, metav1validation.LabelSelectorValidationOptions{}, path.Child(sel.name))...)
		}
	}
	for i := range m.ResourceRules {
		errs = append(errs, validateNamedRule(&m.ResourceRules[i], path.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(&m.ExcludeResourceRules[i], path.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

func validateNamedRule(r *admissionregistrationv1.NamedRuleWithOperations, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, n := range r.ResourceNames {
		for _, msg := range content.IsPathSegmentName(n) {
			errs = append(errs, field.Invalid(path.Child("resourceNames").Index(i), n, msg))
		}
		if names.Has(n) {
			errs = append(errs, field.Duplicate(path.Child("resourceNames").Index(i), n))
		}
		names.Insert(n)
	}
	return append(errs, validateRuleWithOperations(&r.RuleWithOperations, path)...)
}

// celIdentifier is CEL's IDENT, less its reserved words: what a
// variable's name must be, to be written variables.<name>.
var (
	celIdentifier = regexp.MustCompile("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReserved   = sets.New("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
		"import", "let", "loop", "package", "namespace", "return", "var", "void", "while")
)

func validateVariable(c plugincel.Compiler, v admissionregistrationv1.Variable, decls plugincel.OptionalVariableDeclarations,
	stored sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Name) == "" {
		errs = append(errs, field.Required(path.Child("name"), "name is not specified"))
	} else if !celIdentifier.MatchString(v.Name) || celReserved.Has(v.Name) {
		errs = append(errs, field.Invalid(path.Child("name"), v.Name, "must be a valid CEL identifier"))
	}
	if strings.TrimSpace(v.Expression) == "" {
		return append(errs, field.Required(path.Child("expression"), "expression is not specified"))
	}
	cc, ok := c.(*plugincel.CompositedCompiler)
	if !ok {
		return append(errs, field.InternalError(path, fmt.Errorf("variable composition is not allowed")))
	}
	if res := cc.CompileAndStoreVariable(namedExpression{v.Name, v.Expression}, decls, envFor(v.Expression, stored)); res.Error != nil {
		errs = append(errs, celError(path.Child("expression"), v.Expression, res.Error))
	}
	return errs
}

// validStatusReasons are what a failed validation may answer with.
var validStatusReasons = sets.New(string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge))

func validateValidation(c plugincel.Compiler, v admissionregistrationv1.Validation, hasParams bool, stored policyExpressions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(path.Child("expression"), "expression is not specified"))
	} else {
		errs = append(errs, compileErrors(c, expression{v.Expression, boolResult},
			plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true},
			envFor(v.Expression, stored.validations), path.Child("expression"))...)
	}
	trimmedMessageExpression := strings.TrimSpace(v.MessageExpression)
	if v.MessageExpression != "" && trimmedMessageExpression == "" {
		errs = append(errs, field.Invalid(path.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	} else if trimmedMessageExpression != "" {
		// A message may read params, not the authorizer.
		errs = append(errs, compileErrors(c, expression{v.MessageExpression, stringResult},
			plugincel.OptionalVariableDeclarations{HasParams: hasParams}, envFor(v.MessageExpression, stored.messages), path.Child("messageExpression"))...)
	}
	trimmedMessage := strings.TrimSpace(v.Message)
	switch {
	case v.Message != "" && trimmedMessage == "":
		errs = append(errs, field.Invalid(path.Child("message"), v.Message, "must be non-empty if specified"))
	case strings.ContainsAny(trimmedMessage, "\n\r"):
		errs = append(errs, field.Invalid(path.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil && !validStatusReasons.Has(string(*v.Reason)) {
		errs = append(errs, field.NotSupported(path.Child("reason"), *v.Reason, sets.List(validStatusReasons)))
	}
	return errs
}

// maxAuditValueExpression is Kubernetes' limit on an audit annotation's
// expression (5 KiB), below the 10 KiB an annotation's value may be,
// since an expression that joins strings often yields more than its own
// length.
const maxAuditValueExpression = 5 * 1024

func validateAuditAnnotation(c plugincel.Compiler, policy string, a admissionregistrationv1.AuditAnnotation,
	decls plugincel.OptionalVariableDeclarations, stored sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policy != "" {
		errs = append(errs, validateQualifiedName(policy+"/"+a.Key, path.Child("key"))...)
	} else {
		errs = append(errs, field.Invalid(path.Child("key"), a.Key, "requires metadata.name be non-empty"))
	}
	trimmed := strings.TrimSpace(a.ValueExpression)
	switch {
	case trimmed == "":
		errs = append(errs, field.Required(path.Child("valueExpression"), "valueExpression is not specified"))
	case len(trimmed) > maxAuditValueExpression:
		errs = append(errs, field.Required(path.Child("valueExpression"), fmt.Sprintf("must not exceed %d bytes in length", maxAuditValueExpression)))
	default:
		errs = append(errs, compileErrors(c, expression{trimmed, auditResult}, decls, envFor(a.ValueExpression, stored), path.Child("valueExpression"))...)
	}
	return errs
}

func validateValidatingAdmissionPolicyBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateBindingCommon(b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources, path)
	return append(errs, validateValidationActions(b.Spec.ValidationActions, path.Child("validationActions"))...)
}

func validateMutatingAdmissionPolicyBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateBindingCommon(b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources, path)
	return append(errs, validateMutatingOperations(b.Spec.MatchResources, mutatingOperations, path.Child("matchResources", "resourceRules", "operations"))...)
}

func validateBindingCommon(policy string, pr *admissionregistrationv1.ParamRef, m *admissionregistrationv1.MatchResources, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policy == "" {
		errs = append(errs, field.Required(path.Child("policyName"), ""))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(policy, false) {
			errs = append(errs, field.Invalid(path.Child("policyName"), policy, msg))
		}
	}
	errs = append(errs, validateParamRef(pr, path.Child("paramRef"))...)
	return append(errs, validateMatchResources(m, path.Child("matchResources"))...)
}

// validateParamRef: parameters are one object by name or those a
// selector picks, and the binding says what to do when none is found.
func validateParamRef(pr *admissionregistrationv1.ParamRef, path *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	if pr.Name != "" {
		for _, msg := range content.IsPathSegmentName(pr.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			errs = append(errs, field.Forbidden(path.Child("name"), `name and selector are mutually exclusive`))
		}
	}
	if pr.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(pr.Selector, metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
		if pr.Name != "" {
			errs = append(errs, field.Forbidden(path.Child("selector"), `name and selector are mutually exclusive`))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		errs = append(errs, field.Required(path, `one of name or selector must be specified`))
	}
	switch a := pr.ParameterNotFoundAction; {
	case a == nil || *a == "":
		errs = append(errs, field.Required(path.Child("parameterNotFoundAction"), ""))
	case *a != admissionregistrationv1.DenyAction && *a != admissionregistrationv1.AllowAction:
		errs = append(errs, field.NotSupported(path.Child("parameterNotFoundAction"), pr.ParameterNotFoundAction,
			[]string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}))
	}
	return errs
}

var validationActions = sets.New(string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn), string(admissionregistrationv1.Audit))

// validateValidationActions: what a failed validation does, each at
// most once; Deny and Warn together would say the same thing twice.
func validateValidationActions(actions []admissionregistrationv1.ValidationAction, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, a := range actions {
		if !validationActions.Has(string(a)) {
			errs = append(errs, field.NotSupported(path.Index(i), a, sets.List(validationActions)))
		}
		if seen.Has(string(a)) {
			errs = append(errs, field.Duplicate(path.Index(i), a))
		}
		seen.Insert(string(a))
	}
	if seen.Has(string(admissionregistrationv1.Deny)) && seen.Has(string(admissionregistrationv1.Warn)) {
		errs = append(errs, field.Invalid(path, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, field.Required(path, "at least one validation action is required"))
	}
	return errs
}
