package apiserver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/store"
)

// PriorityClasses name pod priorities (seed 003, priority and
// preemption). The Priority admission plugin resolves a pod's
// priorityClassName into spec.priority when the pod is created, or uses
// the class marked globalDefault, or 0. The scheduler orders its queue by
// spec.priority and preempts lower-priority pods for higher ones.

// The two classes every cluster has, for its own critical pods.
var systemPriorityClasses = []*schedulingv1.PriorityClass{
	{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000,
		Description: "Used for system critical pods that must not be moved from their current node."},
	{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: 2000000000,
		Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
}

// highestUserPriority: larger values are reserved for system classes.
const highestUserPriority = 1000000000

var priorityClassesResource = &Resource{
	GroupVersion: schedulingv1.SchemeGroupVersion, Name: "priorityclasses", Kind: "PriorityClass",
	ShortNames: []string{"pc"},
	New:        func() runtime.Object { return &schedulingv1.PriorityClass{} },
	NewList:    func() runtime.Object { return &schedulingv1.PriorityClassList{} },
	Columns: []Column{{Name: "Value", Type: "integer"}, {Name: "Global-Default", Type: "boolean"}, {Name: "Age", Type: "string"},
		{Name: "PreemptionPolicy", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		pc := obj.(*schedulingv1.PriorityClass)
		policy := ""
		if pc.PreemptionPolicy != nil {
			policy = string(*pc.PreemptionPolicy)
		}
		return []any{int64(pc.Value), pc.GlobalDefault, age(pc.CreationTimestamp, now), policy}
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
	Admit: func(ctx context.Context, s *Server, obj, old runtime.Object) error {
		pc := obj.(*schedulingv1.PriorityClass)
		if !pc.GlobalDefault {
			return nil
		}
		// Only one class may be the global default.
		classes, err := s.priorityClasses(ctx)
		if err != nil {
			return err
		}
		for _, other := range classes {
			if other.GlobalDefault && other.Name != pc.Name {
				return apierrors.NewForbidden(schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}, pc.Name,
					fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", other.Name))
			}
		}
		return nil
	},
}

func (s *Server) priorityClasses(ctx context.Context) ([]*schedulingv1.PriorityClass, error) {
	objs, _, err := s.storageOf(schedulingv1.SchemeGroupVersion, "priorityclasses").List(ctx, "", store.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*schedulingv1.PriorityClass, len(objs))
	for i, o := range objs {
		out[i] = o.(*schedulingv1.PriorityClass)
	}
	return out, nil
}

// admitPodPriority is the Priority admission plugin, on pod create.
func admitPodPriority(ctx context.Context, s *Server, pod *corev1.Pod) error {
	classes, err := s.priorityClasses(ctx)
	if err != nil {
		return err
	}
	var class *schedulingv1.PriorityClass
	for _, pc := range classes {
		if pod.Spec.PriorityClassName == pc.Name || (pod.Spec.PriorityClassName == "" && pc.GlobalDefault) {
			class = pc
			break
		}
	}
	if class == nil {
		if pod.Spec.PriorityClassName != "" {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name,
				fmt.Errorf("no PriorityClass with name %s was found", pod.Spec.PriorityClassName))
		}
		pod.Spec.Priority = ptr[int32](0)
		return nil
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != class.Value {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name,
			fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, class.Value))
	}
	pod.Spec.PriorityClassName = class.Name
	pod.Spec.Priority = ptr(class.Value)
	if pod.Spec.PreemptionPolicy == nil {
		pod.Spec.PreemptionPolicy = class.PreemptionPolicy
	}
	return nil
}
