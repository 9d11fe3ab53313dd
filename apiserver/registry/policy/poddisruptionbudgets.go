// Package policy declares policy/v1 PodDisruptionBudgets. They limit
// voluntary disruptions: `kubectl drain` evicts pods through the
// pods/eviction subresource (package core), and the API server refuses
// (429) an eviction that would leave fewer healthy pods than the budget
// allows. The disruption controller keeps each budget's status (how many
// pods are healthy, how many disruptions are allowed) up to date.
//
// It all lives in poddisruptionbudgets.go.
package policy

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

var PodDisruptionBudgets = &apiserver.Resource{
	GroupVersion: policyv1.SchemeGroupVersion, Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true,
	ShortNames:   []string{"pdb"},
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
	NewList:      func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
	Columns: []apiserver.Column{{Name: "Min Available", Type: "string"}, {Name: "Max Unavailable", Type: "string"},
		{Name: "Allowed Disruptions", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		pdb := obj.(*policyv1.PodDisruptionBudget)
		str := func(v *intstr.IntOrString) string {
			if v == nil {
				return "N/A"
			}
			return v.String()
		}
		return []any{str(pdb.Spec.MinAvailable), str(pdb.Spec.MaxUnavailable), int64(pdb.Status.DisruptionsAllowed), apiserver.Age(pdb.CreationTimestamp, now)}
	},
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*policyv1.PodDisruptionBudget).Status = policyv1.PodDisruptionBudgetStatus{}
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		pdb := obj.(*policyv1.PodDisruptionBudget)
		if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
			return field.ErrorList{field.Invalid(field.NewPath("spec"), pdb.Spec, "minAvailable and maxUnavailable cannot be both set")}
		}
		return nil
	},
}
