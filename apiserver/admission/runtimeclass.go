package admission

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RuntimeClass applies a new pod's spec.runtimeClassName (Kubernetes'
// plugin/pkg/admission/runtimeclass): the class must exist; its overhead
// (what the sandbox itself costs: a VM's kernel, say) becomes the pod's
// spec.overhead, which the scheduler and the kubelet add to the
// containers' requests; and its scheduling constraints join the pod's,
// so that the pod lands on a node whose runtime has the handler. Only
// this plugin sets spec.overhead: a pod that brings its own is refused.
var RuntimeClass = Plugin{Name: "RuntimeClass", Admit: admitRuntimeClass, Handles: []Operation{Create}}

var runtimeClasses = schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}

// Kubernetes runs the plugin twice, mutating (set overhead, merge
// scheduling) then validating (the overhead is the class's); mkube's
// chain has one pass, so admitRuntimeClass does both, in that order.
func admitRuntimeClass(ctx context.Context, a *Attributes, objs Objects) error {
	if !isPodWrite(a) {
		return nil
	}
	pod := a.Object.(*corev1.Pod)
	forbidden := func(err error) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: pods.Resource}, pod.Name, err)
	}
	var rc *nodev1.RuntimeClass
	if name := pod.Spec.RuntimeClassName; name != nil {
		obj, err := objs.Get(ctx, runtimeClasses, "", *name)
		if apierrors.IsNotFound(err) {
			return forbidden(fmt.Errorf("pod rejected: RuntimeClass %q not found", *name))
		}
		if err != nil {
			return err
		}
		rc = obj.(*nodev1.RuntimeClass)
	}
	if err := setOverhead(pod, rc); err != nil {
		return forbidden(err)
	}
	if err := mergeScheduling(pod, rc); err != nil {
		return forbidden(err)
	}
	return validateOverhead(pod, rc, forbidden)
}

var errOverheadMismatch = errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")

// setOverhead copies the class's overhead into the pod, unless the pod
// already has a different one.
func setOverhead(pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc == nil || rc.Overhead == nil {
		return nil
	}
	if len(pod.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
		return errOverheadMismatch
	}
	pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	return nil
}

// validateOverhead: the pod's overhead is its class's, or it has none.
func validateOverhead(pod *corev1.Pod, rc *nodev1.RuntimeClass, forbidden func(error) error) error {
	if rc != nil && rc.Overhead != nil {
		if !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return forbidden(errOverheadMismatch)
		}
		return nil
	}
	if pod.Spec.Overhead != nil {
		return forbidden(errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	return nil
}

// mergeScheduling adds the class's nodeSelector to the pod's (a key both
// set to different values is a conflict the pod cannot satisfy) and its
// tolerations to the pod's.
func mergeScheduling(pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc == nil || rc.Scheduling == nil {
		return nil
	}
	selector := pod.Spec.NodeSelector
	if selector == nil && len(rc.Scheduling.NodeSelector) > 0 {
		selector = map[string]string{}
	}
	for key, want := range rc.Scheduling.NodeSelector {
		if have, ok := selector[key]; ok && have != want {
			return fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", key, want, key, have)
		}
		selector[key] = want
	}
	pod.Spec.NodeSelector = selector
	pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, rc.Scheduling.Tolerations)
	return nil
}

// mergeTolerations is Kubernetes' MergeTolerations: both lists, without
// the tolerations another one already covers (Exists on a key covers
// Equal on it; no effect covers every effect; a shorter NoExecute
// tolerationSeconds is covered by a longer or unset one).
func mergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := append(append([]corev1.Toleration{}, first...), second...)
	var merged []corev1.Toleration
next:
	for i, t := range all {
		for _, m := range merged {
			if covers(m, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			// Of two equal tolerations the first is kept.
			if !apiequality.Semantic.DeepEqual(t, later) && covers(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// covers reports whether every taint t tolerates, ss tolerates too.
func covers(ss, t corev1.Toleration) bool {
	if apiequality.Semantic.DeepEqual(ss, t) {
		return true
	}
	// An empty key with Exists matches every key.
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil &&
		(t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds) {
		return false
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
