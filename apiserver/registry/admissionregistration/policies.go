package admissionregistration

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

var (
	policyColumns  = []apiserver.Column{{Name: "ParamKind", Type: "string"}, {Name: "Age", Type: "string"}}
	bindingColumns = []apiserver.Column{{Name: "PolicyName", Type: "string"}, {Name: "ParamRef", Type: "string"}, {Name: "Age", Type: "string"}}
)

// ValidatingAdmissionPolicies are CEL validations of the writes their
// matchConstraints select; the API server reports type-checking results
// in their status.
var ValidatingAdmissionPolicies = &apiserver.Resource{
	GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "validatingadmissionpolicies",
	Kind:         "ValidatingAdmissionPolicy",
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
	NewList:      func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{}
	},
	Default: func(obj runtime.Object) {
		spec := &obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec
		if spec.FailurePolicy == nil {
			spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
		}
		defaultMatchResources(spec.MatchConstraints)
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		var prev *admissionregistrationv1.ValidatingAdmissionPolicy
		if old != nil {
			prev = old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		}
		return validateValidatingAdmissionPolicy(obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), prev)
	},
	Columns: append([]apiserver.Column{{Name: "Validations", Type: "integer"}}, policyColumns...),
	Row: func(obj runtime.Object, now time.Time) []any {
		p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		return []any{int64(len(p.Spec.Validations)), paramKindCell(p.Spec.ParamKind), apiserver.Age(p.CreationTimestamp, now)}
	},
}

// ValidatingAdmissionPolicyBindings apply a policy, with its parameters,
// to the resources they match.
var ValidatingAdmissionPolicyBindings = &apiserver.Resource{
	GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "validatingadmissionpolicybindings",
	Kind:    "ValidatingAdmissionPolicyBinding",
	New:     func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
	NewList: func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{} },
	Default: func(obj runtime.Object) {
		defaultMatchResources(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec.MatchResources)
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		return validateValidatingAdmissionPolicyBinding(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding))
	},
	Columns: bindingColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		return []any{b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), apiserver.Age(b.CreationTimestamp, now)}
	},
}

// MutatingAdmissionPolicies are CEL mutations (an apply configuration
// or a JSON patch) of the writes their matchConstraints select.
var MutatingAdmissionPolicies = &apiserver.Resource{
	GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "mutatingadmissionpolicies",
	Kind:    "MutatingAdmissionPolicy",
	New:     func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicy{} },
	NewList: func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyList{} },
	Default: func(obj runtime.Object) {
		spec := &obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec
		if spec.FailurePolicy == nil {
			spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
		}
		defaultMatchResources(spec.MatchConstraints)
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		var prev *admissionregistrationv1.MutatingAdmissionPolicy
		if old != nil {
			prev = old.(*admissionregistrationv1.MutatingAdmissionPolicy)
		}
		return validateMutatingAdmissionPolicy(obj.(*admissionregistrationv1.MutatingAdmissionPolicy), prev)
	},
	Columns: append([]apiserver.Column{{Name: "Mutations", Type: "integer"}}, policyColumns...),
	Row: func(obj runtime.Object, now time.Time) []any {
		p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
		return []any{int64(len(p.Spec.Mutations)), paramKindCell(p.Spec.ParamKind), apiserver.Age(p.CreationTimestamp, now)}
	},
}

// MutatingAdmissionPolicyBindings apply a mutating policy.
var MutatingAdmissionPolicyBindings = &apiserver.Resource{
	GroupVersion: admissionregistrationv1.SchemeGroupVersion, Name: "mutatingadmissionpolicybindings",
	Kind:    "MutatingAdmissionPolicyBinding",
	New:     func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBinding{} },
	NewList: func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBindingList{} },
	Default: func(obj runtime.Object) {
		defaultMatchResources(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec.MatchResources)
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		return validateMutatingAdmissionPolicyBinding(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding))
	},
	Columns: bindingColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		b := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
		return []any{b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), apiserver.Age(b.CreationTimestamp, now)}
	},
}

// defaultMatchResources is SetDefaults_MatchResources and its rules'
// SetDefaults_Rule.
func defaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		defaultRule(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		defaultRule(&m.ExcludeResourceRules[i].Rule)
	}
}

// paramKindCell is the PARAMKIND column: "<apiVersion>/<kind>" or <unset>.
func paramKindCell(pk *admissionregistrationv1.ParamKind) string {
	if pk == nil {
		return "<unset>"
	}
	return pk.APIVersion + "/" + pk.Kind
}

// paramRefCell is the PARAMREF column: "namespace/name", "*/name" (the
// printer cannot tell a cluster-scoped parameter from one in every
// namespace), the selector, or <unset>.
func paramRefCell(pr *admissionregistrationv1.ParamRef) string {
	switch {
	case pr == nil:
		return "<unset>"
	case pr.Name != "" && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case pr.Name != "":
		return "*/" + pr.Name
	case pr.Selector != nil:
		return pr.Selector.String() // the Go form, as Kubernetes' printer shows it
	}
	return "<unset>"
}
