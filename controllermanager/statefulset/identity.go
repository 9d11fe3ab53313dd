package statefulset

import (
	"fmt"
	"regexp"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A stateful pod's identity is its ordinal: the set web's pod of ordinal 2
// is called web-2, has hostname web-2 in the subdomain of the set's
// governing Service (so DNS can name it web-2.nginx.<ns>.svc), carries the
// labels statefulset.kubernetes.io/pod-name=web-2 and
// apps.kubernetes.io/pod-index=2, and mounts the claims made for ordinal 2
// from each volumeClaimTemplate: www-web-2. A replacement web-2 gets the
// same name, hostname and claims, which is the whole point of the kind.

var (
	controllerKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	podKind        = corev1.SchemeGroupVersion.WithKind("Pod")
)

// statefulPodName matches <parent>-<ordinal>.
var statefulPodName = regexp.MustCompile(`^(.*)-([0-9]+)$`)

// parentAndOrdinal splits a pod's name into its set's name and ordinal;
// -1 for a name that is not a stateful pod's.
func parentAndOrdinal(pod *corev1.Pod) (string, int) {
	m := statefulPodName.FindStringSubmatch(pod.Name)
	if m == nil {
		return "", -1
	}
	ord, err := strconv.ParseInt(m[2], 10, 32)
	if err != nil {
		return "", -1
	}
	return m[1], int(ord)
}

func ordinalOf(pod *corev1.Pod) int {
	_, ord := parentAndOrdinal(pod)
	return ord
}

// startOrdinal is spec.ordinals.start, or 0: the set's pods are ordinals
// [start, start+replicas).
func startOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

func replicasOf(set *appsv1.StatefulSet) int { return int(ptr.Deref(set.Spec.Replicas, 1)) }

// inOrdinalRange: the pod is one the set wants now (not condemned).
func inOrdinalRange(pod *corev1.Pod, set *appsv1.StatefulSet) bool {
	ord := ordinalOf(pod)
	return ord >= startOrdinal(set) && ord < startOrdinal(set)+replicasOf(set)
}

func podName(set *appsv1.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

// claimName is <template>-<set>-<ordinal>, the claim a pod mounts for a
// volumeClaimTemplate.
func claimName(set *appsv1.StatefulSet, template string, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", template, set.Name, ordinal)
}

// isMemberOf: the pod's name says it belongs to the set. A pod the
// selector matches but named otherwise is not adopted.
func isMemberOf(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, _ := parentAndOrdinal(pod)
	return parent == set.Name
}

// identityMatches: name, namespace and pod-name label are the ordinal's.
func identityMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	parent, ord := parentAndOrdinal(pod)
	return ord >= 0 && parent == set.Name && pod.Name == podName(set, ord) && pod.Namespace == set.Namespace &&
		pod.Labels[appsv1.StatefulSetPodNameLabel] == pod.Name
}

// storageMatches: the pod mounts, for each claim template, its own claim.
func storageMatches(set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	ord := ordinalOf(pod)
	if ord < 0 {
		return false
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, t := range set.Spec.VolumeClaimTemplates {
		v, ok := volumes[t.Name]
		if !ok || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claimName(set, t.Name, ord) {
			return false
		}
	}
	return true
}

// claimsFor are the claims the pod of this ordinal mounts, one per
// template, in the templates' order: the template, renamed, in the set's
// namespace, labelled also with the set's selector (so `kubectl get pvc
// -l app=nginx` finds them).
func claimsFor(set *appsv1.StatefulSet, ordinal int) []*corev1.PersistentVolumeClaim {
	out := make([]*corev1.PersistentVolumeClaim, 0, len(set.Spec.VolumeClaimTemplates))
	for i := range set.Spec.VolumeClaimTemplates {
		c := set.Spec.VolumeClaimTemplates[i].DeepCopy()
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
		c.Name, c.Namespace = claimName(set, c.Name, ordinal), set.Namespace
		c.Status = corev1.PersistentVolumeClaimStatus{}
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		if set.Spec.Selector != nil {
			for k, v := range set.Spec.Selector.MatchLabels {
				c.Labels[k] = v
			}
		}
		out = append(out, c)
	}
	return out
}

// newPod is the pod of ordinal made from set's template (Kubernetes'
// newStatefulSetPod): the template's metadata and spec, a controller
// ownerReference, then the identity and the claims' volumes.
func newPod(set *appsv1.StatefulSet, ordinal int) *corev1.Pod {
	t := set.Spec.Template.DeepCopy()
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            podName(set, ordinal),
			GenerateName:    set.Name + "-",
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, controllerKind)},
		},
		Spec: t.Spec,
	}
	updateIdentity(set, pod)
	// Set only at creation: a pod's hostname and subdomain are immutable.
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
	updateStorage(set, pod)
	return pod
}

// updateIdentity gives pod its ordinal's name, namespace and labels.
func updateIdentity(set *appsv1.StatefulSet, pod *corev1.Pod) {
	ord := ordinalOf(pod)
	pod.Name, pod.Namespace = podName(set, ord), set.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
	pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ord)
}

// updateStorage makes pod's volumes mount its ordinal's claims: one
// volume per claim template (replacing a template volume of that name),
// then the template's other volumes.
func updateStorage(set *appsv1.StatefulSet, pod *corev1.Pod) {
	ord := ordinalOf(pod)
	claims := map[string]bool{}
	volumes := make([]corev1.Volume, 0, len(pod.Spec.Volumes)+len(set.Spec.VolumeClaimTemplates))
	for _, t := range set.Spec.VolumeClaimTemplates {
		claims[t.Name] = true
		volumes = append(volumes, corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(set, t.Name, ord)}}})
	}
	for _, v := range pod.Spec.Volumes {
		if !claims[v.Name] {
			volumes = append(volumes, v)
		}
	}
	pod.Spec.Volumes = volumes
}

// revisionOf is the pod's controller-revision-hash label: the name of the
// ControllerRevision whose template it was made from.
func revisionOf(pod *corev1.Pod) string { return pod.Labels[appsv1.StatefulSetRevisionLabel] }

func setRevision(pod *corev1.Pod, revision string) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1.StatefulSetRevisionLabel] = revision
}
