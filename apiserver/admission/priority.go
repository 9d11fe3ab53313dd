package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Priority resolves a new pod's priorityClassName into spec.priority (or
// uses the class marked globalDefault, or 0), which the scheduler orders
// its queue and preempts by (seed 003, priority and preemption). It also
// keeps PriorityClasses to one global default.
var Priority = Plugin{Name: "Priority", Admit: admitPriority}

func admitPriority(ctx context.Context, a *Attributes, objs Objects) error {
	switch {
	case isPodWrite(a) && a.Operation == Create: // priority is fixed at creation
		return admitPodPriority(ctx, a.Object.(*corev1.Pod), objs)
	case a.Resource == priorityClasses && a.Subresource == "":
		return admitOneGlobalDefault(ctx, a.Object.(*schedulingv1.PriorityClass), objs)
	}
	return nil
}

func listPriorityClasses(ctx context.Context, objs Objects) ([]*schedulingv1.PriorityClass, error) {
	list, err := objs.List(ctx, priorityClasses, "")
	if err != nil {
		return nil, err
	}
	out := make([]*schedulingv1.PriorityClass, len(list))
	for i, o := range list {
		out[i] = o.(*schedulingv1.PriorityClass)
	}
	return out, nil
}

func admitPodPriority(ctx context.Context, pod *corev1.Pod, objs Objects) error {
	classes, err := listPriorityClasses(ctx, objs)
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
	podsGR := schema.GroupResource{Resource: pods.Resource}
	if class == nil {
		if pod.Spec.PriorityClassName != "" {
			return apierrors.NewForbidden(podsGR, pod.Name, fmt.Errorf("no PriorityClass with name %s was found", pod.Spec.PriorityClassName))
		}
		zero := int32(0)
		pod.Spec.Priority = &zero
		return nil
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != class.Value {
		return apierrors.NewForbidden(podsGR, pod.Name,
			fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, class.Value))
	}
	value := class.Value
	pod.Spec.PriorityClassName = class.Name
	pod.Spec.Priority = &value
	if pod.Spec.PreemptionPolicy == nil {
		pod.Spec.PreemptionPolicy = class.PreemptionPolicy
	}
	return nil
}

// admitOneGlobalDefault: only one class may be the global default.
func admitOneGlobalDefault(ctx context.Context, pc *schedulingv1.PriorityClass, objs Objects) error {
	if !pc.GlobalDefault {
		return nil
	}
	classes, err := listPriorityClasses(ctx, objs)
	if err != nil {
		return err
	}
	for _, other := range classes {
		if other.GlobalDefault && other.Name != pc.Name {
			return apierrors.NewForbidden(priorityClasses.GroupResource(), pc.Name,
				fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", other.Name))
		}
	}
	return nil
}
