package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	resourcehelper "k8s.io/component-helpers/resource"
)

// LimitRanger applies the namespace's LimitRanges (Kubernetes'
// plugin/pkg/admission/limitranger) in two steps, as kube-apiserver's
// mutating and validating phases do:
//
//  1. defaults: a new pod's containers and init containers that leave a
//     resource out get the request and limit of each LimitRange's
//     Container item (defaultRequest, default), and the pod says so in
//     its kubernetes.io/limit-ranger annotation;
//  2. bounds: the pod is refused if a container, or the pod as a whole,
//     is outside an item's min, max or maxLimitRequestRatio, and so is a
//     claim whose storage request is outside a PersistentVolumeClaim item.
//
// With "min: {cpu: 50m}, max: {cpu: 500m}, default: {cpu: 500m}", a
// container that asks for nothing gets a 500m request and limit; one
// that asks for a 800m limit is refused with "maximum cpu usage per
// Container is 500m, but limit is 800m".
//
// A pod's containers cannot change once it exists, so only pods being
// created are judged; claims are judged on every write (a resize too).
var LimitRanger = Plugin{Name: "LimitRanger", Admit: admitLimitRanger}

// limitRangerAnnotation lists what the plugin set on a pod.
const limitRangerAnnotation = "kubernetes.io/limit-ranger"

var limitRanges = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}

func admitLimitRanger(ctx context.Context, a *Attributes, objs Objects) error {
	if a.Subresource != "" || !(a.Resource == persistentVolumeClaims || (a.Resource == pods && a.Operation == Create)) {
		return nil
	}
	if a.OldObject != nil { // an object being deleted is left alone
		if m, err := meta.Accessor(a.OldObject); err == nil && m.GetDeletionTimestamp() != nil {
			return nil
		}
	}
	name := ""
	if m, err := meta.Accessor(a.Object); err == nil {
		name = m.GetName()
	}
	list, err := objs.List(ctx, limitRanges, a.Namespace)
	if err != nil {
		return apierrors.NewForbidden(a.Resource.GroupResource(), name,
			fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.Operation, a.Resource))
	}
	ranges := make([]*corev1.LimitRange, len(list))
	for i, o := range list {
		ranges[i] = o.(*corev1.LimitRange)
	}
	if pod, ok := a.Object.(*corev1.Pod); ok {
		for _, lr := range ranges {
			applyContainerDefaults(lr, pod)
		}
	}
	for _, lr := range ranges {
		var err error
		switch obj := a.Object.(type) {
		case *corev1.Pod:
			err = checkPodLimits(lr, obj)
		case *corev1.PersistentVolumeClaim:
			err = checkClaimLimits(lr, obj)
		}
		if err != nil { // the first LimitRange that refuses says why
			return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
		}
	}
	return nil
}

// applyContainerDefaults is step 1 for one LimitRange. The annotation
// reads "LimitRanger plugin set: cpu, memory request for container nginx;
// cpu, memory limit for container nginx"; a later LimitRange that sets
// something too writes its own over it, as in Kubernetes.
func applyContainerDefaults(lr *corev1.LimitRange, pod *corev1.Pod) {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for name, q := range item.DefaultRequest {
			requests[name] = q.DeepCopy()
		}
		for name, q := range item.Default {
			limits[name] = q.DeepCopy()
		}
	}
	var set []string
	for i := range pod.Spec.Containers {
		set = fillContainerResources(&pod.Spec.Containers[i], requests, limits, "container", set)
	}
	for i := range pod.Spec.InitContainers {
		set = fillContainerResources(&pod.Spec.InitContainers[i], requests, limits, "init container", set)
	}
	if len(set) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[limitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(set, "; ")
	}
}

// fillContainerResources gives c each default it lacks and appends to
// set what it gave: "cpu, memory request for container nginx".
func fillContainerResources(c *corev1.Container, requests, limits corev1.ResourceList, kind string, set []string) []string {
	fill := func(dst *corev1.ResourceList, defaults corev1.ResourceList) []string {
		var names []string
		for name, q := range defaults {
			if *dst == nil {
				*dst = corev1.ResourceList{}
			}
			if _, ok := (*dst)[name]; !ok {
				(*dst)[name] = q.DeepCopy()
				names = append(names, string(name))
			}
		}
		sort.Strings(names)
		return names
	}
	if names := fill(&c.Resources.Requests, requests); len(names) > 0 {
		set = append(set, fmt.Sprintf("%s request for %s %s", strings.Join(names, ", "), kind, c.Name))
	}
	if names := fill(&c.Resources.Limits, limits); len(names) > 0 {
		set = append(set, fmt.Sprintf("%s limit for %s %s", strings.Join(names, ", "), kind, c.Name))
	}
	return set
}

// checkPodLimits is step 2 for a pod: each container and init container
// against the Container item, the pod's total (as the scheduler counts
// it, without overhead) against the Pod item.
func checkPodLimits(lr *corev1.LimitRange, pod *corev1.Pod) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, c := range append(append([]corev1.Container{}, pod.Spec.Containers...), pod.Spec.InitContainers...) {
				errs = append(errs, checkItem(item, c.Resources.Requests, c.Resources.Limits)...)
			}
		case corev1.LimitTypePod:
			opts := resourcehelper.PodResourcesOptions{ExcludeOverhead: true}
			errs = append(errs, checkItem(item, resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts))...)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// checkClaimLimits is step 2 for a claim: only its requests count (a
// claim's limits mean nothing to storage), and nothing is defaulted,
// since a claim must say how much it wants.
func checkClaimLimits(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		kind, requests := string(item.Type), pvc.Spec.Resources.Requests
		for _, name := range sortedResourceNames(item.Min) {
			errs = append(errs, minConstraint(kind, name, item.Min[name], requests, nil))
		}
		for _, name := range sortedResourceNames(item.Max) {
			errs = append(errs, maxRequestConstraint(kind, name, item.Max[name], requests))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// checkItem holds one container's (or pod's) requests and limits to one
// item's min, max and maxLimitRequestRatio, in that order, resources by
// name (Kubernetes walks them in map order).
func checkItem(item corev1.LimitRangeItem, requests, limits corev1.ResourceList) []error {
	kind := string(item.Type)
	var errs []error
	for _, name := range sortedResourceNames(item.Min) {
		errs = append(errs, minConstraint(kind, name, item.Min[name], requests, limits))
	}
	for _, name := range sortedResourceNames(item.Max) {
		errs = append(errs, maxConstraint(kind, name, item.Max[name], requests, limits))
	}
	for _, name := range sortedResourceNames(item.MaxLimitRequestRatio) {
		errs = append(errs, ratioConstraint(kind, name, item.MaxLimitRequestRatio[name], requests, limits))
	}
	return errs // nils included: NewAggregate drops them
}

func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		out = append(out, name)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// atCommonPrecision returns the three quantities in milli-units when none would
// overflow, else in whole units, so that 500m and 0.5 compare equal and
// 10Ei still compares at all.
func atCommonPrecision(request, limit, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := request.Value(), limit.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return request.MilliValue(), limit.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

// minConstraint: a request is required, and it and the limit are at least min.
func minConstraint(kind string, name corev1.ResourceName, min resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, m := atCommonPrecision(req, lim, min)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, kind, min.String())
	case r < m:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, kind, min.String(), req.String())
	case hasLim && l < m:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, kind, min.String(), lim.String())
	}
	return nil
}

// maxConstraint: a limit is required, and it and the request are at most max.
func maxConstraint(kind string, name corev1.ResourceName, max resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, m := atCommonPrecision(req, lim, max)
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, kind, max.String())
	case l > m:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, kind, max.String(), lim.String())
	case hasReq && r > m:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, kind, max.String(), req.String())
	}
	return nil
}

// maxRequestConstraint is maxConstraint for what has requests only (claims).
func maxRequestConstraint(kind string, name corev1.ResourceName, max resource.Quantity, requests corev1.ResourceList) error {
	req, hasReq := requests[name]
	r, _, m := atCommonPrecision(req, resource.Quantity{}, max)
	switch {
	case !hasReq:
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, kind, max.String())
	case r > m:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, kind, max.String(), req.String())
	}
	return nil
}

// ratioConstraint: both are set and non-zero, and limit/request is at
// most the ratio. A ratio of 2 refuses a 1-CPU limit over a 250m request
// ("provided ratio is 4.000000").
func ratioConstraint(kind string, name corev1.ResourceName, ratio resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, _ := atCommonPrecision(req, lim, ratio)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, kind, ratio.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, kind, ratio.String())
	}
	observed := float64(l) / float64(r)
	got, allowed := observed, float64(ratio.Value())
	if ratio.Value() <= resource.MaxMilliValue { // compare in milli-units, as the ratio may be 1.5
		got, allowed = observed*1000, float64(ratio.MilliValue())
	}
	if got > allowed {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, kind, ratio.String(), observed)
	}
	return nil
}
