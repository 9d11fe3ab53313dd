package eviction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/kubelet/internal/kubelettest"
)

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
		{"an emptyDir within its sizeLimit is fine", kubelettest.StoragePod("1Ki", "", ""), usage(1024, 0, 0, 0), ""},
		{"an emptyDir one byte over its sizeLimit evicts the pod, in Kubernetes' words and trailing space",
			kubelettest.StoragePod("1Ki", "", ""), usage(1025, 0, 0, 0), `Usage of EmptyDir volume "cache" exceeds the limit "1Ki". `},
		{"an emptyDir without a sizeLimit may hold anything", kubelettest.StoragePod("", "", ""), usage(1<<30, 0, 0, 0), ""},
		{"the pod's limit is the sum of its containers' and counts its volumes",
			kubelettest.StoragePod("", "1Ki", "1Ki"), usage(1000, 1000, 10, 100), `Pod ephemeral local storage usage exceeds the total limit of containers 2Ki. `},
		{"a container over its own limit evicts the pod, naming the container",
			kubelettest.StoragePod("", "1Ki", "10Ki"), usage(0, 0, 2000, 0), `Container app exceeded its local ephemeral storage limit "1Ki". `},
		{"a container without a limit only counts toward the pod's",
			kubelettest.StoragePod("", "", "10Ki"), usage(0, 0, 8000, 0), ""},
		{"the emptyDir is checked first, as Kubernetes does",
			kubelettest.StoragePod("1Ki", "1Ki", ""), usage(5000, 0, 5000, 0), `Usage of EmptyDir volume "cache" exceeds the limit "1Ki". `},
		{"the pod's total is checked before each container's",
			kubelettest.StoragePod("", "1Ki", "1Ki"), usage(0, 0, 3000, 0), `Pod ephemeral local storage usage exceeds the total limit of containers 2Ki. `},
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
	memory := kubelettest.StoragePod("1Ki", "", "")
	memory.Spec.Volumes[0].EmptyDir.Medium = corev1.StorageMediumMemory
	failed := kubelettest.StoragePod("1Ki", "", "")
	failed.Status.Phase = corev1.PodFailed
	mirror := kubelettest.StoragePod("1Ki", "", "")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"a running pod with an emptyDir sizeLimit is watched", kubelettest.StoragePod("1Ki", "", ""), true},
		{"a running pod with a container's ephemeral-storage limit is watched", kubelettest.StoragePod("", "", "1Ki"), true},
		{"a pod that limits nothing is not", kubelettest.StoragePod("", "", ""), false},
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
