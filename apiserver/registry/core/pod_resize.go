package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// resizeSubresource is in-place pod resize (`kubectl patch pod web
// --subresource resize -p '{"spec":{"containers":[{"name":"web",
// "resources":{"requests":{"cpu":"200m"}}}]}}'`): a PUT or a PATCH of
// pods/NAME/resize writes the containers' cpu and memory requests and
// limits, and their resizePolicy, and nothing else of the pod (Kubernetes'
// podResizeStrategy: whatever else the body changes is dropped). A change
// bumps metadata.generation; the pod's kubelet then applies the new
// resources to the running containers, or restarts those whose
// resizePolicy says RestartContainer (kubelet/resize.go).
var resizeSubresource = apiserver.WritesSubresource("resize", resizePod)

// resizePod is the stored pod with the client's container resources and
// resize policies, validated as Kubernetes' ValidatePodResize.
func resizePod(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
	old, in := cur.(*corev1.Pod), next.(*corev1.Pod)
	spec := field.NewPath("spec")
	if _, static := old.Annotations[corev1.MirrorPodAnnotationKey]; static {
		return nil, field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if errs := sameContainers(in.Spec.Containers, old.Spec.Containers, spec.Child("containers"), "containers"); len(errs) > 0 {
		return nil, errs
	}
	if errs := sameContainers(in.Spec.InitContainers, old.Spec.InitContainers, spec.Child("initContainers"), "initContainers"); len(errs) > 0 {
		return nil, errs
	}
	pod := old.DeepCopy()
	var errs field.ErrorList
	for i := range pod.Spec.Containers {
		errs = append(errs, takeResize(&pod.Spec.Containers[i], &in.Spec.Containers[i], spec.Child("containers").Index(i), spec)...)
	}
	for i := range pod.Spec.InitContainers {
		c, want := &pod.Spec.InitContainers[i], &in.Spec.InitContainers[i]
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways { // not a sidecar
			// A regular init container has run to completion: there is
			// nothing left to resize.
			if !apiequality.Semantic.DeepEqual(c.Resources, want.Resources) || !apiequality.Semantic.DeepEqual(c.ResizePolicy, want.ResizePolicy) {
				errs = append(errs, field.Forbidden(spec, "resources for non-sidecar init containers are immutable"))
			}
			continue
		}
		errs = append(errs, takeResize(c, want, spec.Child("initContainers").Index(i), spec.Child("initContainers").Index(i))...)
	}
	if qos := qosClass(pod); qos != qosClass(old) {
		errs = append(errs, field.Invalid(spec, qos, "Pod QOS Class may not change as a result of resizing"))
	}
	errs = append(errs, ValidatePodSpec(&pod.Spec, spec)...)
	if len(errs) == 0 && !apiequality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		pod.Generation = old.Generation + 1
	}
	return pod, errs
}

// sameContainers: a resize neither adds, removes, renames nor reorders
// containers.
func sameContainers(in, old []corev1.Container, path *field.Path, what string) field.ErrorList {
	if len(in) != len(old) {
		return field.ErrorList{field.Forbidden(path, what+" may not be added or removed on resize")}
	}
	var errs field.ErrorList
	for i := range old {
		if in[i].Name != old[i].Name {
			errs = append(errs, field.Forbidden(path.Index(i).Child("name"), what+" may not be renamed or reordered on resize"))
		}
	}
	return errs
}

// takeResize gives c want's resources and resize policy: only cpu and
// memory may change, and none may be removed. A limit without a request
// requests the limit, as on create.
func takeResize(c, want *corev1.Container, path, specPath *field.Path) field.ErrorList {
	res := *want.Resources.DeepCopy()
	defaultRequests(&res) // podspec_defaults.go
	var errs field.ErrorList
	if removed(res.Requests, c.Resources.Requests) {
		errs = append(errs, field.Forbidden(path.Child("resources", "requests"), "resource requests cannot be removed"))
	}
	if removed(res.Limits, c.Resources.Limits) {
		errs = append(errs, field.Forbidden(path.Child("resources", "limits"), "resource limits cannot be removed"))
	}
	if !sameBeyondCPUAndMemory(res.Requests, c.Resources.Requests) || !sameBeyondCPUAndMemory(res.Limits, c.Resources.Limits) ||
		!apiequality.Semantic.DeepEqual(res.Claims, c.Resources.Claims) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	c.Resources, c.ResizePolicy = res, want.ResizePolicy
	return errs
}

// removed: a resource old has is missing from list.
func removed(list, old corev1.ResourceList) bool {
	for name := range old {
		if _, ok := list[name]; !ok {
			return true
		}
	}
	return false
}

// sameBeyondCPUAndMemory: the lists agree on every resource but cpu and
// memory.
func sameBeyondCPUAndMemory(a, b corev1.ResourceList) bool {
	others := func(l corev1.ResourceList) corev1.ResourceList {
		out := corev1.ResourceList{}
		for name, q := range l {
			if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
				out[name] = q
			}
		}
		return out
	}
	return apiequality.Semantic.DeepEqual(others(a), others(b))
}
