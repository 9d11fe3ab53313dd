package volumemanager

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestMemoryVolumeSize(t *testing.T) {
	node := resource.MustParse("8Gi")
	limited := func(limits ...string) *corev1.Pod {
		pod := &corev1.Pod{}
		for _, l := range limits {
			c := corev1.Container{}
			if l != "" {
				c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(l)}
			}
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
		return pod
	}
	memory := func(sizeLimit string) corev1.Volume {
		v := corev1.Volume{VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}
		if sizeLimit != "" {
			v.EmptyDir.SizeLimit = ptr.To(resource.MustParse(sizeLimit))
		}
		return v
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		v    corev1.Volume
		want string
	}{
		{"a sizeLimit below the pod's memory limit is the size", limited("128Mi"), memory("64Mi"), "64Mi"},
		{"without a sizeLimit the pod's memory limit is the size", limited("128Mi", "128Mi"), memory(""), "256Mi"},
		{"a sizeLimit above the pod's memory limit is cut to it", limited("128Mi"), memory("1Gi"), "128Mi"},
		{"a pod with a container without a memory limit has no pod limit", limited("128Mi", ""), memory(""), "8Gi"},
		{"nothing set: the node's allocatable memory", limited(""), memory(""), "8Gi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := memoryVolumeSize(tc.pod, tc.v, &node)
			if want := resource.MustParse(tc.want); got.Cmp(want) != 0 {
				t.Errorf("size = %s, want %s", got.String(), tc.want)
			}
		})
	}
}
