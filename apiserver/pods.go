package apiserver

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var podsResource = &Resource{
	GroupVersion: corev1.SchemeGroupVersion, Name: "pods", Kind: "Pod", Namespaced: true,
	ShortNames: []string{"po"}, Categories: []string{"all"},
	Columns: podColumns, Row: podRow,
	Subresources: []Subresource{{Name: "binding", Kind: "Binding", Verbs: []string{"create"}}, evictionSubresource, logSubresource},
	New:          func() runtime.Object { return &corev1.Pod{} },
	NewList:      func() runtime.Object { return &corev1.PodList{} },
	Status:       true,
	PrepareForCreate: func(obj runtime.Object) {
		pod := obj.(*corev1.Pod)
		// Step 3: a new pod is Pending until a kubelet reports otherwise.
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qosClass(pod)}
	},
	Default: func(obj runtime.Object) {
		pod := obj.(*corev1.Pod)
		defaultPodSpec(&pod.Spec)
		defaultTolerations(&pod.Spec)
		if pod.Spec.ServiceAccountName == "" {
			pod.Spec.ServiceAccountName = "default"
		}
		pod.Spec.DeprecatedServiceAccount = pod.Spec.ServiceAccountName
	},
	Admit: func(ctx context.Context, s *Server, obj, old runtime.Object) error {
		if old != nil {
			return nil // priority is fixed at creation
		}
		return admitPodPriority(ctx, s, obj.(*corev1.Pod))
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		pod := obj.(*corev1.Pod)
		errs := validatePodSpec(&pod.Spec, field.NewPath("spec"))
		if old != nil {
			errs = append(errs, validatePodSpecUpdate(&pod.Spec, &old.(*corev1.Pod).Spec)...)
		}
		return errs
	},
	Fields: func(obj runtime.Object) fields.Set {
		pod := obj.(*corev1.Pod)
		return fields.Set{
			"spec.nodeName":            pod.Spec.NodeName,
			"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
			"spec.schedulerName":       pod.Spec.SchedulerName,
			"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
			"status.phase":             string(pod.Status.Phase),
			"status.podIP":             pod.Status.PodIP,
			"status.nominatedNodeName": pod.Status.NominatedNodeName,
		}
	},
	GracePeriod: podGracePeriod,
}

// podGracePeriod is Kubernetes' graceful pod deletion: a pod running on a
// node gets terminationGracePeriodSeconds (or the DELETE's
// gracePeriodSeconds) for its kubelet to stop the containers. A pod that
// never reached a node, or already finished, has nothing to stop.
func podGracePeriod(obj runtime.Object, requested *int64) (int64, bool) {
	pod := obj.(*corev1.Pod)
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0, false
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if requested != nil {
		grace = *requested
	}
	if grace < 0 {
		grace = 1 // as Kubernetes: a negative period means "as soon as possible", not "never"
	}
	return grace, grace > 0
}

// validatePodSpecUpdate enforces that a pod's spec is immutable apart from a
// few fields, with Kubernetes' own message.
func validatePodSpecUpdate(spec, old *corev1.PodSpec) field.ErrorList {
	mutable := old.DeepCopy()
	for i := range mutable.Containers {
		if i < len(spec.Containers) {
			mutable.Containers[i].Image = spec.Containers[i].Image
		}
	}
	for i := range mutable.InitContainers {
		if i < len(spec.InitContainers) {
			mutable.InitContainers[i].Image = spec.InitContainers[i].Image
		}
	}
	mutable.ActiveDeadlineSeconds = spec.ActiveDeadlineSeconds
	mutable.Tolerations = spec.Tolerations
	mutable.TerminationGracePeriodSeconds = spec.TerminationGracePeriodSeconds
	if equality.Semantic.DeepEqual(mutable, spec) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec"),
		"pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")}
}

// qosClass is the pod's Quality of Service class: Guaranteed when every
// container limits cpu and memory at its requests, BestEffort when no
// container asks for anything, Burstable otherwise.
func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	any, guaranteed := false, true
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if len(c.Resources.Requests)+len(c.Resources.Limits) > 0 {
			any = true
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			lim, ok := c.Resources.Limits[name]
			if !ok {
				guaranteed = false
				continue
			}
			if req, ok := c.Resources.Requests[name]; ok && req.Cmp(lim) != 0 {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
