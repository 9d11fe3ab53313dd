// Package scheduling declares scheduling.k8s.io/v1 PriorityClasses, which
// name pod priorities (seed 003, priority and preemption). The Priority
// admission plugin resolves a pod's priorityClassName into spec.priority
// when the pod is created; the scheduler orders its queue by it and
// preempts lower-priority pods for higher ones.
//
// It all lives in priorityclasses.go.
package scheduling

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// The two classes every cluster has, for its own critical pods.
var systemPriorityClasses = []runtime.Object{
	&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000,
		Description: "Used for system critical pods that must not be moved from their current node."},
	&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: 2000000000,
		Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
}

// highestUserPriority: larger values are reserved for system classes.
const highestUserPriority = 1000000000

var PriorityClasses = &apiserver.Resource{
	GroupVersion: schedulingv1.SchemeGroupVersion, Name: "priorityclasses", Kind: "PriorityClass",
	ShortNames: []string{"pc"},
	New:        func() runtime.Object { return &schedulingv1.PriorityClass{} },
	NewList:    func() runtime.Object { return &schedulingv1.PriorityClassList{} },
	Columns: []apiserver.Column{{Name: "Value", Type: "integer"}, {Name: "Global-Default", Type: "boolean"}, {Name: "Age", Type: "string"},
		{Name: "PreemptionPolicy", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		pc := obj.(*schedulingv1.PriorityClass)
		policy := ""
		if pc.PreemptionPolicy != nil {
			policy = string(*pc.PreemptionPolicy)
		}
		return []any{int64(pc.Value), pc.GlobalDefault, apiserver.Age(pc.CreationTimestamp, now), policy}
	},
	Default: func(obj runtime.Object) {
		pc := obj.(*schedulingv1.PriorityClass)
		if pc.PreemptionPolicy == nil {
			p := corev1.PreemptLowerPriority
			pc.PreemptionPolicy = &p
		}
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		pc := obj.(*schedulingv1.PriorityClass)
		var errs field.ErrorList
		system := pc.Name == "system-node-critical" || pc.Name == "system-cluster-critical"
		if pc.Value > highestUserPriority && !system {
			errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %d", highestUserPriority)))
		}
		if old != nil && old.(*schedulingv1.PriorityClass).Value != pc.Value {
			errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
		}
		return errs
	},
	Bootstrap: systemPriorityClasses,
}
