package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
)

// Pods are the unit everything else exists for (seed 000 §一): created by a
// user or a controller, bound to a node by the scheduler (pods/binding),
// run and reported on by that node's kubelet (pods/status), read through
// pods/log and moved off a node through pods/eviction.
var Pods = &apiserver.Resource{
	GroupVersion: v1, Name: "pods", Kind: "Pod", Namespaced: true,
	ShortNames: []string{"po"}, Categories: []string{"all"},
	Columns: podColumns, Row: podRow,
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource, bindingSubresource, evictionSubresource, logSubresource, execSubresource, attachSubresource, portForwardSubresource,
		ephemeralContainersSubresource, resizeSubresource, podProxySubresource},
	New:     func() runtime.Object { return &corev1.Pod{} },
	NewList: func() runtime.Object { return &corev1.PodList{} },
	PrepareForCreate: func(obj runtime.Object) {
		pod := obj.(*corev1.Pod)
		// Step 3: a new pod is Pending until a kubelet reports otherwise.
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	},
	// The QoS class follows from the resources as admission left them
	// (LimitRanger's defaults): kube-apiserver's strategy computes it after
	// the mutating plugins too.
	Admit: func(_ context.Context, _ admission.Objects, obj, old runtime.Object) error {
		if pod := obj.(*corev1.Pod); old == nil {
			pod.Status.QOSClass = qosClass(pod)
		}
		return nil
	},
	Default: func(obj runtime.Object) { DefaultPodSpec(&obj.(*corev1.Pod).Spec) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		pod := obj.(*corev1.Pod)
		errs := ValidatePodSpec(&pod.Spec, field.NewPath("spec"))
		if old != nil {
			errs = append(errs, validatePodSpecUpdate(&pod.Spec, &old.(*corev1.Pod).Spec)...)
		} else if len(pod.Spec.EphemeralContainers) > 0 { // only pods/ephemeralcontainers adds them
			errs = append(errs, field.Forbidden(field.NewPath("spec", "ephemeralContainers"), "cannot be set on create"))
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
	WriteStep:   podWriteStep,
	EventStep:   podEventStep,
}

// podWriteStep: the pod writes of seed 000's flow, as the API server
// stores them.
func podWriteStep(info apiserver.RequestInfo, obj runtime.Object) (int, string) {
	pod := obj.(*corev1.Pod)
	switch {
	case info.Verb == "create" && info.Subresource == "" && metav1.GetControllerOf(pod) != nil:
		return seedstep.ControllerPodStored, "stored the pod a controller created in etcd"
	case info.Verb == "create" && info.Subresource == "":
		return seedstep.StoredAndAcknowledged, "stored the new pod in etcd and acknowledged the client"
	case info.Subresource == bindingSubresource.Name:
		return seedstep.BindingStored, "stored the scheduler's binding: pod.spec.nodeName is set"
	case info.Subresource == apiserver.StatusSubresource.Name:
		return seedstep.PodStatusStored, "stored the pod status the kubelet reported"
	}
	return 0, ""
}

// podEventStep: etcd reporting a new pod (step 4, or step 8 when a
// controller made it) or its binding to a node (step 11).
func podEventStep(obj, prev runtime.Object) (int, string, []any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok { // a deletion
		return 0, "", nil
	}
	before, _ := prev.(*corev1.Pod)
	switch {
	case prev == nil && metav1.GetControllerOf(pod) != nil:
		return seedstep.EtcdReportsControllerPod, "etcd reported a pod a controller created", []any{"pod", client.KeyOf(pod)}
	case prev == nil:
		return seedstep.EtcdReportsCreate, "etcd reported a new pod", []any{"pod", client.KeyOf(pod)}
	case before != nil && before.Spec.NodeName == "" && pod.Spec.NodeName != "":
		return seedstep.EtcdReportsBinding, "etcd reported the pod's binding", []any{"pod", client.KeyOf(pod), "node", pod.Spec.NodeName}
	}
	return 0, "", nil
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
