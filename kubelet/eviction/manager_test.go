package eviction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// storagePod is a pod with an emptyDir "cache" of sizeLimit, a configMap
// volume, and containers "app" and "side" with the ephemeral-storage
// limits given ("" for none).
func storagePod(sizeLimit, appLimit, sideLimit string) *corev1.Pod {
	container := func(name, limit string) corev1.Container {
		c := corev1.Container{Name: name, Image: "busybox:1.36"}
		if limit != "" {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(limit)}
		}
		return c
	}
	cache := corev1.Volume{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	if sizeLimit != "" {
		cache.EmptyDir.SizeLimit = ptr.To(resource.MustParse(sizeLimit))
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: corev1.PodSpec{NodeName: "node01", Containers: []corev1.Container{container("app", appLimit), container("side", sideLimit)},
			Volumes: []corev1.Volume{cache, {Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}}},
	}
}

func TestLocalStorageEviction(t *testing.T) {
	usage := func(cache, config, app, side int64) Usage {
		return Usage{Volumes: map[string]int64{"cache": cache, "config": config},
			Containers: map[string]int64{"app": app, "side": side}}
	}
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		usage Usage
		want  string // "" for no eviction
	}{
		{"an emptyDir within its sizeLimit is fine", storagePod("1Ki", "", ""), usage(1024, 0, 0, 0), ""},
		{"an emptyDir one byte over its sizeLimit evicts the pod, in Kubernetes' words and trailing space",
			storagePod("1Ki", "", ""), usage(1025, 0, 0, 0), `Usage of EmptyDir volume "cache" exceeds the limit "1Ki". `},
		{"an emptyDir without a sizeLimit may hold anything", storagePod("", "", ""), usage(1<<30, 0, 0, 0), ""},
		{"the pod's limit is the sum of its containers' and counts its volumes",
			storagePod("", "1Ki", "1Ki"), usage(1000, 1000, 10, 100), `Pod ephemeral local storage usage exceeds the total limit of containers 2Ki. `},
		{"a container over its own limit evicts the pod, naming the container",
			storagePod("", "1Ki", "10Ki"), usage(0, 0, 2000, 0), `Container app exceeded its local ephemeral storage limit "1Ki". `},
		{"a container without a limit only counts toward the pod's",
			storagePod("", "", "10Ki"), usage(0, 0, 8000, 0), ""},
		{"the emptyDir is checked first, as Kubernetes does",
			storagePod("1Ki", "1Ki", ""), usage(5000, 0, 5000, 0), `Usage of EmptyDir volume "cache" exceeds the limit "1Ki". `},
		{"the pod's total is checked before each container's",
			storagePod("", "1Ki", "1Ki"), usage(0, 0, 3000, 0), `Pod ephemeral local storage usage exceeds the total limit of containers 2Ki. `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, over := localStorageEviction(tc.pod, tc.usage)
			if msg != tc.want || over != (tc.want != "") {
				t.Errorf("got %q, %v; want %q", msg, over, tc.want)
			}
		})
	}
}

func TestEvictable(t *testing.T) {
	memory := storagePod("1Ki", "", "")
	memory.Spec.Volumes[0].EmptyDir.Medium = corev1.StorageMediumMemory
	failed := storagePod("1Ki", "", "")
	failed.Status.Phase = corev1.PodFailed
	mirror := storagePod("1Ki", "", "")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"a running pod with an emptyDir sizeLimit is watched", storagePod("1Ki", "", ""), true},
		{"a running pod with a container's ephemeral-storage limit is watched", storagePod("", "", "1Ki"), true},
		{"a pod that limits nothing is not", storagePod("", "", ""), false},
		{"a tmpfs emptyDir's sizeLimit is its size, not watched", memory, false},
		{"a finished pod is not", failed, false},
		{"a static pod is never evicted", mirror, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := evictable(tc.pod); got != tc.want {
				t.Errorf("evictable = %v, want %v", got, tc.want)
			}
		})
	}
}
