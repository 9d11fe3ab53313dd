package flowcontrol

import (
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// FlowSchemas are cluster-scoped; their status (the Dangling condition)
// is the API server's to write in Kubernetes.
var FlowSchemas = &apiserver.Resource{
	GroupVersion: flowcontrolv1.SchemeGroupVersion, Name: "flowschemas", Kind: "FlowSchema",
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &flowcontrolv1.FlowSchema{} },
	NewList:      func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*flowcontrolv1.FlowSchema).Status = flowcontrolv1.FlowSchemaStatus{}
	},
	Default: func(obj runtime.Object) {
		if fs := obj.(*flowcontrolv1.FlowSchema); fs.Spec.MatchingPrecedence == 0 {
			fs.Spec.MatchingPrecedence = defaultMatchingPrecedence
		}
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		return validateFlowSchema(obj.(*flowcontrolv1.FlowSchema))
	},
	Columns: []apiserver.Column{{Name: "PriorityLevel", Type: "string"}, {Name: "MatchingPrecedence", Type: "string"},
		{Name: "DistinguisherMethod", Type: "string"}, {Name: "Age", Type: "string"}, {Name: "MissingPL", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		fs := obj.(*flowcontrolv1.FlowSchema)
		method, missing := "<none>", "?"
		if fs.Spec.DistinguisherMethod != nil {
			method = string(fs.Spec.DistinguisherMethod.Type)
		}
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
				missing = string(c.Status)
				break
			}
		}
		return []any{fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method, apiserver.Age(fs.CreationTimestamp, now), missing}
	},
	Bootstrap: []runtime.Object{exemptFlowSchema, catchAllFlowSchema},
}

// defaultMatchingPrecedence is Kubernetes' default; lower matches first.
const defaultMatchingPrecedence = 1000

// maxMatchingPrecedence is the highest precedence, catch-all's.
const maxMatchingPrecedence = 10000

var (
	distinguisherMethods = sets.New(flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.FlowDistinguisherMethodByNamespaceType)
	subjectKinds         = sets.New(flowcontrolv1.SubjectKindUser, flowcontrolv1.SubjectKindGroup, flowcontrolv1.SubjectKindServiceAccount)
)

// validateFlowSchema follows Kubernetes' ValidateFlowSchemaSpec: a
// priority level, a precedence in [1, 10000], a known distinguisher, and
// rules with subjects and at least one resource or non-resource rule.
func validateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if fs.Spec.PriorityLevelConfiguration.Name == "" {
		errs = append(errs, field.Required(spec.Child("priorityLevelConfiguration", "name"), "must reference a priority level"))
	}
	if p := fs.Spec.MatchingPrecedence; p <= 0 || p > maxMatchingPrecedence {
		errs = append(errs, field.Invalid(spec.Child("matchingPrecedence"), p, "must be between 1 and 10000 inclusively"))
	}
	if d := fs.Spec.DistinguisherMethod; d != nil && !distinguisherMethods.Has(d.Type) {
		errs = append(errs, field.NotSupported(spec.Child("distinguisherMethod", "type"), d.Type, sets.List(distinguisherMethods)))
	}
	for i, rule := range fs.Spec.Rules {
		p := spec.Child("rules").Index(i)
		if len(rule.Subjects) == 0 {
			errs = append(errs, field.Required(p.Child("subjects"), "subjects must contain at least one value"))
		}
		for j, s := range rule.Subjects {
			if !subjectKinds.Has(s.Kind) {
				errs = append(errs, field.NotSupported(p.Child("subjects").Index(j).Child("kind"), s.Kind, sets.List(subjectKinds)))
			}
		}
		if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
			errs = append(errs, field.Required(p, "at least one of resourceRules and nonResourceRules has to be non-empty"))
		}
		for j, r := range rule.ResourceRules {
			rp := p.Child("resourceRules").Index(j)
			if len(r.Verbs) == 0 {
				errs = append(errs, field.Required(rp.Child("verbs"), "verbs must contain at least one value"))
			}
			if len(r.APIGroups) == 0 {
				errs = append(errs, field.Required(rp.Child("apiGroups"), "resource rules must supply at least one api group"))
			}
			if len(r.Resources) == 0 {
				errs = append(errs, field.Required(rp.Child("resources"), "resource rules must supply at least one resource"))
			}
			if len(r.Namespaces) == 0 && !r.ClusterScope {
				errs = append(errs, field.Required(rp.Child("namespaces"), "resource rules that are not cluster scoped must supply at least one namespace"))
			}
		}
		for j, r := range rule.NonResourceRules {
			rp := p.Child("nonResourceRules").Index(j)
			if len(r.Verbs) == 0 {
				errs = append(errs, field.Required(rp.Child("verbs"), "verbs must contain at least one value"))
			}
			if len(r.NonResourceURLs) == 0 {
				errs = append(errs, field.Required(rp.Child("nonResourceURLs"), "nonResourceURLs must contain at least one value"))
			}
		}
	}
	return errs
}
