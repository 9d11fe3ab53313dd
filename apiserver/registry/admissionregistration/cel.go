package admissionregistration

import (
	"fmt"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// The expressions these kinds hold are CEL, compiled on every write with
// Kubernetes' own CEL environment (k8s.io/apiserver): the variables
// object, oldObject, request, authorizer (and params, variables where the
// kind has them), Kubernetes' extension libraries, and its cost limits. A
// typo is refused with the compiler's words:
//
//	webhooks[0].matchConditions[0].expression: Invalid value: "... [] bad expression": compilation failed: ERROR: <input>:1:1: Syntax error: ...
//
// An expression the stored object already had is compiled in the
// StoredExpressions environment, which keeps accepting what a newer
// Kubernetes has stopped accepting, so an old object stays editable.

// expression is one CEL expression and the types it may evaluate to:
// what the compiler checks it against.
type expression struct {
	text    string
	returns []*celgo.Type
}

func (e expression) GetExpression() string      { return e.text }
func (e expression) ReturnTypes() []*celgo.Type { return e.returns }
func (e namedExpression) GetName() string       { return e.name }
func (e namedExpression) GetExpression() string { return e.text }
func (e namedExpression) ReturnTypes() []*celgo.Type {
	return []*celgo.Type{celgo.AnyType, celgo.DynType}
}

// namedExpression is a policy's variable: its value is variables.<name>.
type namedExpression struct{ name, text string }

var (
	boolResult    = []*celgo.Type{celgo.BoolType}
	stringResult  = []*celgo.Type{celgo.StringType}
	auditResult   = []*celgo.Type{celgo.StringType, celgo.NullType}
	applyResult   = []*celgo.Type{celtypes.NewObjectType("Object")}
	jsonPatchList = []*celgo.Type{celgo.ListType(celtypes.NewObjectType("JSONPatch"))}
)

// statelessCompiler compiles expressions that cannot refer to a policy's
// variables (match conditions): one for the process, built on first use
// (building Kubernetes' environment costs a few milliseconds).
var statelessCompiler = sync.OnceValue(func() plugincel.Compiler {
	return plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
})

// newCompositedCompiler compiles one policy's expressions, which may
// refer to its variables: it is stateful (it remembers the variables
// compiled so far), so each policy gets its own.
func newCompositedCompiler() plugincel.Compiler {
	c, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return statelessCompiler()
	}
	return c
}

// envFor is the environment an expression is compiled in.
func envFor(text string, stored sets.Set[string]) environment.Type {
	if stored.Has(text) {
		return environment.StoredExpressions
	}
	return environment.NewExpressions
}

// compileErrors compiles e and turns a failure into the field error
// Kubernetes' convertCELErrorToValidationError makes of it.
func compileErrors(c plugincel.Compiler, e plugincel.ExpressionAccessor, decls plugincel.OptionalVariableDeclarations,
	env environment.Type, path *field.Path) field.ErrorList {
	res := c.CompileCELExpression(e, decls, env)
	if res.Error == nil {
		return nil
	}
	return field.ErrorList{celError(path, e.GetExpression(), res.Error)}
}

func celError(path *field.Path, text string, err *apiservercel.Error) *field.Error {
	switch err.Type {
	case apiservercel.ErrorTypeRequired:
		return field.Required(path, err.Detail)
	case apiservercel.ErrorTypeInvalid:
		return field.Invalid(path, text, err.Detail)
	case apiservercel.ErrorTypeInternal:
		return field.InternalError(path, err)
	}
	return field.InternalError(path, fmt.Errorf("unsupported error type: %w", err))
}

// validateMatchConditions: at most 64, each named (a qualified name,
// unique) with a boolean CEL expression, which may read params only in a
// policy with a paramKind.
func validateMatchConditions(conds []admissionregistrationv1.MatchCondition, allowParams bool, stored sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > 64 {
		errs = append(errs, field.TooMany(path, len(conds), 64))
	}
	names := sets.New[string]()
	for i, mc := range conds {
		p := path.Index(i)
		if text := strings.TrimSpace(mc.Expression); text == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		} else {
			errs = append(errs, compileErrors(statelessCompiler(), expression{text, boolResult},
				plugincel.OptionalVariableDeclarations{HasParams: allowParams, HasAuthorizer: true},
				envFor(mc.Expression, stored), p.Child("expression"))...)
		}
		if mc.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, validateQualifiedName(mc.Name, p.Child("name"))...)
			if names.Has(mc.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), mc.Name))
			}
			names.Insert(mc.Name)
		}
	}
	return errs
}

// validateQualifiedName is Kubernetes' ValidateQualifiedName: a label
// key's form, "[prefix/]name".
func validateQualifiedName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}
