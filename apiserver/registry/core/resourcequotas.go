package core

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/internal/quota"
)

// ResourceQuotas limit what a namespace may use of the cluster it shares
// with others (seed 003 八, Namespace): how many objects of a
// kind (pods: 10, count/deployments.apps: 5), and how much cpu, memory
// and storage its pods and claims may ask for (requests.cpu: 4). The
// ResourceQuota admission plugin charges every new object to the quotas
// that count it and refuses what would go over spec.hard; the resource
// quota controller copies spec.hard into status.hard, which is what
// admission enforces, and recounts status.used. Scopes narrow a quota to
// some pods: Terminating ones, BestEffort ones, those of a PriorityClass.
var ResourceQuotas = &apiserver.Resource{
	GroupVersion: corev1.SchemeGroupVersion, Name: "resourcequotas", Kind: "ResourceQuota", Namespaced: true,
	ShortNames:   []string{"quota"},
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &corev1.ResourceQuota{} },
	NewList:      func() runtime.Object { return &corev1.ResourceQuotaList{} },
	// The status is the controller's (and admission's): a new quota
	// starts with none, so nothing is enforced until the controller has
	// counted it.
	PrepareForCreate: func(obj runtime.Object) { obj.(*corev1.ResourceQuota).Status = corev1.ResourceQuotaStatus{} },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		q := obj.(*corev1.ResourceQuota)
		errs := validateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))
		if old != nil {
			errs = append(errs, validateScopesUnchanged(q, old.(*corev1.ResourceQuota))...)
		}
		return errs
	},
	Columns: []apiserver.Column{{Name: "Request", Type: "string"}, {Name: "Limit", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		q := obj.(*corev1.ResourceQuota)
		request, limit := quotaColumns(q)
		return []any{request, limit, apiserver.Age(q.CreationTimestamp, now)}
	},
}

// quotaColumns are kubectl's REQUEST and LIMIT cells, used/hard for each
// name of status.hard in order: "pods: 1/10, requests.cpu: 500m/2" and
// "limits.cpu: 1/4" (printers.go's printResourceQuota).
func quotaColumns(q *corev1.ResourceQuota) (request, limit string) {
	var requests, limits []string
	for _, name := range quota.Names(q.Status.Hard) {
		used, hard := q.Status.Used[name], q.Status.Hard[name]
		cell := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
		if strings.HasPrefix(string(name), "limits.") {
			limits = append(limits, cell)
		} else {
			requests = append(requests, cell)
		}
	}
	return strings.Join(requests, ", "), strings.Join(limits, ", ")
}

// validateResourceQuotaSpec is Kubernetes' ValidateResourceQuotaSpec: the
// hard limits' names and values, the scopes, the scope selector.
func validateResourceQuotaSpec(spec *corev1.ResourceQuotaSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range quota.Names(spec.Hard) {
		p := path.Child("hard").Key(string(name))
		errs = append(errs, validateQuotaResourceName(name, p)...)
		errs = append(errs, validateQuotaQuantity(name, spec.Hard[name], p)...)
	}
	errs = append(errs, validateQuotaScopes(spec, path.Child("scopes"))...)
	if spec.ScopeSelector != nil {
		errs = append(errs, validateScopeSelector(spec, path.Child("scopeSelector", "matchExpressions"))...)
	}
	return errs
}

// validateQuotaResourceName: a qualified name; unprefixed, one of the
// names quota knows (pods, requests.cpu, ...); prefixed ones
// (count/deployments.apps, requests.example.com/dongle) are free.
func validateQuotaResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if strings.Contains(string(name), "/") {
		return errs
	}
	if len(errs) == 0 && !quota.IsStandardName(name) {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource type or fully qualified"))
	}
	if !quota.IsStandardQuotaName(name) {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource for quota"))
	}
	return errs
}

// validateQuotaQuantity: not negative, and whole for what is counted in
// units (pods, services, extended resources).
func validateQuotaQuantity(name corev1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(path, q.String(), "must be greater than or equal to 0"))
	}
	if quota.IsIntegerName(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(path, q, "must be an integer"))
	}
	return errs
}

// conflictingScopes are the pairs no pod can be in both of.
var conflictingScopes = []sets.Set[corev1.ResourceQuotaScope]{
	sets.New(corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort),
	sets.New(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating),
}

// validateQuotaScopes: known scopes, each valid for every standard name
// the quota limits (a BestEffort pod asks for no cpu, so a BestEffort
// quota cannot limit cpu), and no conflicting pair.
func validateQuotaScopes(spec *corev1.ResourceQuotaSpec, path *field.Path) field.ErrorList {
	if len(spec.Scopes) == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, scope := range spec.Scopes {
		if !quota.IsStandardScope(scope) {
			errs = append(errs, field.Invalid(path, spec.Scopes, "unsupported scope"))
		}
		for _, name := range quota.Names(spec.Hard) {
			if quota.IsStandardQuotaName(name) && !quota.IsScopeValidForName(scope, name) {
				errs = append(errs, field.Invalid(path, spec.Scopes, "unsupported scope applied to resource"))
			}
		}
	}
	if hasConflictingScopes(sets.New(spec.Scopes...)) {
		errs = append(errs, field.Invalid(path, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

func hasConflictingScopes(scopes sets.Set[corev1.ResourceQuotaScope]) bool {
	for _, pair := range conflictingScopes {
		if scopes.IsSuperset(pair) {
			return true
		}
	}
	return false
}

// validateScopeSelector checks spec.scopeSelector.matchExpressions as
// Kubernetes' validateScopedResourceSelectorRequirement does: the same
// scope rules as spec.scopes, Exists for the scopes that take no value,
// values exactly for In and NotIn.
func validateScopeSelector(spec *corev1.ResourceQuotaSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	scopes := sets.New[corev1.ResourceQuotaScope]()
	for _, req := range spec.ScopeSelector.MatchExpressions {
		if !quota.IsStandardScope(req.ScopeName) {
			errs = append(errs, field.Invalid(path.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for _, name := range quota.Names(spec.Hard) {
			if quota.IsStandardQuotaName(name) && !quota.IsScopeValidForName(req.ScopeName, name) {
				errs = append(errs, field.Invalid(path, spec.ScopeSelector, "unsupported scope applied to resource"))
			}
		}
		switch req.ScopeName {
		case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
			corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			if req.Operator != corev1.ScopeSelectorOpExists {
				errs = append(errs, field.Invalid(path.Child("operator"), req.Operator,
					"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		switch req.Operator {
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(path.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				errs = append(errs, field.Invalid(path.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			errs = append(errs, field.Invalid(path.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		scopes.Insert(req.ScopeName)
	}
	if hasConflictingScopes(scopes) {
		errs = append(errs, field.Invalid(path, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

// validateScopesUnchanged: a quota's scopes are fixed at creation
// (Kubernetes' ValidateResourceQuotaUpdate): changing them would make
// its status.used count other pods than the ones it charged.
func validateScopesUnchanged(q, old *corev1.ResourceQuota) field.ErrorList {
	if sets.New(q.Spec.Scopes...).Equal(sets.New(old.Spec.Scopes...)) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "scopes"), q.Spec.Scopes, "field is immutable")}
}
