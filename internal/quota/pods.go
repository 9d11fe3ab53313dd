package quota

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Pods is the pod evaluator (Kubernetes' podEvaluator). A pod costs its
// object count (count/pods) while it is stored, and while it is not
// finished also "pods: 1" and what its containers ask for: requests.cpu
// (and cpu, the older name), limits.cpu, the same for memory and
// ephemeral-storage, hugepages, and requests.<name> for an extended
// resource. Worked example: containers asking for 250m and 250m of cpu
// with a 1 limit on one cost {pods: 1, cpu: 500m, requests.cpu: 500m,
// limits.cpu: 1, count/pods: 1}.
var Pods Evaluator = podEvaluator{}

type podEvaluator struct{}

var podCountName = ObjectCountName(schema.GroupResource{Resource: "pods"})

// podNames are the names a pod counts towards, besides the prefixed ones.
var podNames = sets.New(podCountName, corev1.ResourcePods,
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage)

// requestsDeviceClassPrefix names the extended resources a DRA device
// class stands for: requests.deviceclass.resource.kubernetes.io/<class>.
const requestsDeviceClassPrefix = corev1.DefaultResourceRequestsPrefix + "deviceclass.resource.kubernetes.io/"

// mustSpecify are the names which, when a quota limits them, every
// container must ask for explicitly. Kubernetes calls this coupling of
// validation with counting a mistake kept for compatibility, and limits
// it to cpu and memory.
var mustSpecify = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceRequestsCPU,
	corev1.ResourceRequestsMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory)

func (podEvaluator) GroupResource() schema.GroupResource {
	return schema.GroupResource{Resource: "pods"}
}

// Handles: a pod's cost is fixed at creation; an update matters only when
// it moves the pod between the Terminating and NotTerminating scopes
// (activeDeadlineSeconds set or cleared), or resizes it.
func (podEvaluator) Handles(w Write) bool {
	switch w.Subresource {
	case "":
		if w.Old == nil {
			return true
		}
		return IsTerminating(w.Object.(*corev1.Pod)) != IsTerminating(w.Old.(*corev1.Pod))
	case "resize":
		return w.Old != nil
	}
	return false
}

func (podEvaluator) Matching(names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range names {
		s := string(name)
		switch {
		case podNames.Has(name),
			strings.HasPrefix(s, corev1.ResourceHugePagesPrefix), strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix),
			isExtendedQuotaName(name):
			out = append(out, name)
		}
	}
	return out
}

// isExtendedQuotaName: requests.example.com/dongle, the only way a quota
// limits an extended resource (they cannot be overcommitted, so requests
// and limits are the same).
func isExtendedQuotaName(name corev1.ResourceName) bool {
	s := string(name)
	return strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) &&
		(!IsNativeName(name) || strings.HasPrefix(s, requestsDeviceClassPrefix))
}

func (podEvaluator) MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod := obj.(*corev1.Pod)
	switch sel.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return IsTerminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !IsTerminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return IsBestEffort(pod), nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !IsBestEffort(pod), nil
	case corev1.ResourceQuotaScopePriorityClass:
		if sel.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		return selectorMatches(sel, pod.Spec.PriorityClassName)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return usesCrossNamespaceAffinity(pod), nil
	}
	return false, nil
}

// Constraints: with a quota on cpu or memory, every container must ask
// for it; the message names each missing resource and its containers:
// "must specify limits.cpu for: web; requests.memory for: init,web". A
// pod with pod-level resources is exempt: its containers need not ask.
func (podEvaluator) Constraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod := obj.(*corev1.Pod)
	if resourcehelper.IsPodLevelResourcesSet(pod) {
		return nil
	}
	needed := sets.New(required...).Intersection(mustSpecify)
	missing := map[corev1.ResourceName]sets.Set[string]{}
	for _, c := range slices.Concat(pod.Spec.Containers, pod.Spec.InitContainers) {
		stated := computeUsage(c.Resources.Requests, c.Resources.Limits)
		for _, name := range sets.List(needed) {
			if _, ok := stated[name]; !ok {
				if missing[name] == nil {
					missing[name] = sets.New[string]()
				}
				missing[name].Insert(c.Name)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var parts []string
	for _, name := range sets.List(sets.KeySet(missing)) {
		parts = append(parts, fmt.Sprintf("%s for: %s", name, strings.Join(sets.List(missing[name]), ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(parts, "; "))
}

// Usage: a finished pod, or one stuck terminating past its grace period
// (its node lost, say), costs only its object count, so that it does not
// keep its owner from replacing it.
func (podEvaluator) Usage(obj runtime.Object, now time.Time) (corev1.ResourceList, error) {
	pod := obj.(*corev1.Pod)
	out := corev1.ResourceList{podCountName: one()}
	if !Charged(pod, now) {
		return out, nil
	}
	// What the pod asks for, as the scheduler sums it: the largest init
	// container or the sum of the others, pod-level resources where set,
	// plus overhead; resized pods by what the kubelet reports.
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true}
	return Add(out, computeUsage(resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts))), nil
}

// computeUsage turns requests and limits into quota names (Kubernetes'
// podComputeUsageHelper).
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourcePods: one()}
	for _, r := range []struct{ name, request, limit corev1.ResourceName }{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
		{corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage},
	} {
		if q, ok := requests[r.name]; ok {
			out[r.name] = q.DeepCopy()
			out[r.request] = q.DeepCopy()
		}
		if q, ok := limits[r.name]; ok {
			out[r.limit] = q.DeepCopy()
		}
	}
	for name, q := range requests {
		switch {
		case strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
			out[name] = q.DeepCopy()
			out[corev1.DefaultResourceRequestsPrefix+name] = q.DeepCopy()
		case IsExtendedName(name) || strings.HasPrefix(string(name), "deviceclass.resource.kubernetes.io/"):
			out[corev1.DefaultResourceRequestsPrefix+name] = q.DeepCopy()
		}
	}
	return out
}

// Charged reports whether a pod's compute resources count: not once it
// has finished (Succeeded or Failed), nor once its deletion is past its
// grace period (Kubernetes' QuotaV1Pod).
func Charged(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		grace := time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		if now.After(pod.DeletionTimestamp.Add(grace)) {
			return false
		}
	}
	return true
}

// IsTerminating: the pod has an activeDeadlineSeconds, so it will end
// (a Job's pod, say): the Terminating scope.
func IsTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// IsBestEffort: the pod's QoS class is BestEffort, no cpu or memory
// request or limit anywhere (pod-level resources, where set, decide).
func IsBestEffort(pod *corev1.Pod) bool {
	var reqs []corev1.ResourceRequirements
	if resourcehelper.IsPodLevelResourcesSet(pod) {
		reqs = append(reqs, *pod.Spec.Resources)
	} else {
		for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
			reqs = append(reqs, c.Resources)
		}
	}
	for _, r := range reqs {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, lim := r.Requests[name], r.Limits[name]
			if !req.IsZero() || !lim.IsZero() {
				return false
			}
		}
	}
	return true
}

// usesCrossNamespaceAffinity: a pod (anti-)affinity term names other
// namespaces or selects them, the CrossNamespacePodAffinity scope, which
// lets an administrator forbid or limit it.
func usesCrossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	return slices.ContainsFunc(terms, func(t corev1.PodAffinityTerm) bool {
		return len(t.Namespaces) > 0 || t.NamespaceSelector != nil
	})
}
