package persistentvolume

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/ephemeral"
)

// IndexPodsByClaim indexes pods by the claims their volumes use, as
// "namespace/claim": how the storage controllers find a claim's pods
// without a scan (Kubernetes' PodPVCIndex).
const IndexPodsByClaim = "pvc"

// PodClaimIndex is the IndexFunc for IndexPodsByClaim: a
// persistentVolumeClaim volume's claim, and the claim Kubernetes makes for
// an ephemeral volume (<pod>-<volume>).
func PodClaimIndex(obj runtime.Object) []string {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	var keys []string
	for i, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			keys = append(keys, pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			keys = append(keys, pod.Namespace+"/"+ephemeral.VolumeClaimName(pod, &pod.Spec.Volumes[i]))
		}
	}
	return keys
}

// IsPodTerminated is Kubernetes' rule for a pod done with its volumes: it
// has finished, or it is being deleted and none of its containers runs.
func IsPodTerminated(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return true
	}
	if pod.DeletionTimestamp == nil {
		return false
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Running != nil {
			return false
		}
	}
	return true
}

// podsUsing are the pods, not terminated, whose volumes name the claim.
func (b *binder) podsUsing(claimKey string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, obj := range b.pods.ByIndex(IndexPodsByClaim, claimKey) {
		if pod := obj.(*corev1.Pod); !IsPodTerminated(pod) {
			out = append(out, pod)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// activePodsUsing names them "namespace/name".
func (b *binder) activePodsUsing(claimKey string) []string {
	var out []string
	for _, pod := range b.podsUsing(claimKey) {
		out = append(out, pod.Namespace+"/"+pod.Name)
	}
	return out
}
