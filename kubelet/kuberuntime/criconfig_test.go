package kuberuntime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestContainerResources(t *testing.T) {
	for _, tc := range []struct {
		requests, limits      corev1.ResourceList
		shares, quota, memory int64
	}{
		{shares: 2},
		{requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}, shares: 256},
		{limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
			shares: 2, quota: 50_000, memory: 100 << 20},
	} {
		r := ContainerResources(corev1.Container{Resources: corev1.ResourceRequirements{Requests: tc.requests, Limits: tc.limits}})
		if r.CpuShares != tc.shares || r.CpuQuota != tc.quota || r.MemoryLimitInBytes != tc.memory {
			t.Errorf("requests %v limits %v: shares %d quota %d memory %d, want %d %d %d", tc.requests, tc.limits,
				r.CpuShares, r.CpuQuota, r.MemoryLimitInBytes, tc.shares, tc.quota, tc.memory)
		}
	}
}
