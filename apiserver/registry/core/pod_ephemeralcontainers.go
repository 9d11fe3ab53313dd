package core

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// ephemeralContainersSubresource is how a container is added to a running
// pod (`kubectl debug -it web --image=busybox --target=web`): a PUT or a
// PATCH of pods/NAME/ephemeralcontainers, which writes the pod's
// spec.ephemeralContainers and nothing else (Kubernetes'
// EphemeralContainersStrategy). The pod's kubelet then starts the new
// container in the pod's sandbox (kubelet/ephemeral.go).
var ephemeralContainersSubresource = apiserver.WritesSubresource("ephemeralcontainers", updateEphemeralContainers)

// updateEphemeralContainers is the stored pod with the client's
// ephemeral containers, defaulted and validated. An ephemeral container
// once added is never changed nor removed. Adding one is a change of the
// pod's spec: it bumps metadata.generation.
func updateEphemeralContainers(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
	old, in := cur.(*corev1.Pod), next.(*corev1.Pod)
	pod := old.DeepCopy()
	pod.Spec.EphemeralContainers = in.Spec.EphemeralContainers
	for i := range pod.Spec.EphemeralContainers {
		c := corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		defaultContainer(&c)
		pod.Spec.EphemeralContainers[i].EphemeralContainerCommon = corev1.EphemeralContainerCommon(c)
	}
	errs := validateEphemeralContainers(&pod.Spec, field.NewPath("spec", "ephemeralContainers"))
	errs = append(errs, validateEphemeralContainersKept(pod.Spec.EphemeralContainers, old.Spec.EphemeralContainers)...)
	if len(errs) == 0 && !apiequality.Semantic.DeepEqual(pod.Spec.EphemeralContainers, old.Spec.EphemeralContainers) {
		pod.Generation = old.Generation + 1
	}
	return pod, errs
}

// validateEphemeralContainers is Kubernetes' validateEphemeralContainers:
// each a container of its own name (unique among all the pod's
// containers) and image, without what only a container that is part of
// the pod's plan may have: ports, probes, lifecycle hooks, resources, a
// restart policy. Its targetContainerName, if any, is one of the pod's
// containers.
func validateEphemeralContainers(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	names := sets.New[string]()
	for _, c := range spec.InitContainers {
		names.Insert(c.Name)
	}
	for _, c := range spec.Containers {
		names.Insert(c.Name)
	}
	targets := names.Clone()
	ecs := make([]corev1.Container, len(spec.EphemeralContainers))
	for i, ec := range spec.EphemeralContainers {
		ecs[i] = corev1.Container(ec.EphemeralContainerCommon)
	}
	errs := validateContainers(ecs, path, names)
	for i, ec := range spec.EphemeralContainers {
		p := path.Index(i)
		forbidden := func(child string, set bool) {
			if set {
				errs = append(errs, field.Forbidden(p.Child(child), "cannot be set for an Ephemeral Container"))
			}
		}
		forbidden("ports", len(ec.Ports) > 0)
		forbidden("livenessProbe", ec.LivenessProbe != nil)
		forbidden("readinessProbe", ec.ReadinessProbe != nil)
		forbidden("startupProbe", ec.StartupProbe != nil)
		forbidden("lifecycle", ec.Lifecycle != nil)
		forbidden("resources", len(ec.Resources.Limits) > 0 || len(ec.Resources.Requests) > 0 || len(ec.Resources.Claims) > 0)
		forbidden("resizePolicy", len(ec.ResizePolicy) > 0)
		forbidden("restartPolicy", ec.RestartPolicy != nil)
		if t := ec.TargetContainerName; t != "" && !targets.Has(t) {
			errs = append(errs, field.NotFound(p.Child("targetContainerName"), t))
		}
	}
	return errs
}

// validateEphemeralContainersKept: every ephemeral container already in
// the pod is still there, unchanged.
func validateEphemeralContainersKept(ecs, old []corev1.EphemeralContainer) field.ErrorList {
	path := field.NewPath("spec", "ephemeralContainers")
	byName := map[string]int{}
	for i, ec := range ecs {
		byName[ec.Name] = i
	}
	var errs field.ErrorList
	for _, o := range old {
		i, ok := byName[o.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("existing ephemeral containers %q may not be removed", o.Name)))
		case !apiequality.Semantic.DeepEqual(ecs[i], o):
			errs = append(errs, field.Forbidden(path.Index(i), fmt.Sprintf("existing ephemeral containers %q may not be changed", o.Name)))
		}
	}
	return errs
}
