package framework_test

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// PodRequests and NonZeroPodRequests are teaching copies of Kubernetes'
// arithmetic. This test runs one table of pods through them and through
// the library Kubernetes uses, k8s.io/component-helpers/resource, so that
// the copies cannot drift from it unnoticed.

// resources is a ResourceList from name, quantity pairs.
func resources(kv ...string) corev1.ResourceList {
	rl := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		rl[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return rl
}

// with returns pod after f changed its spec.
func with(pod *corev1.Pod, f func(*corev1.PodSpec)) *corev1.Pod {
	f(&pod.Spec)
	return pod
}

// podLevel sets spec.resources.requests.
func podLevel(pod *corev1.Pod, kv ...string) *corev1.Pod {
	return with(pod, func(s *corev1.PodSpec) { s.Resources = &corev1.ResourceRequirements{Requests: resources(kv...)} })
}

// kubeSchedulerNonZero is how kube-scheduler counts a pod's cpu and memory
// for scoring (calculateResource and getNonMissingContainerRequests in
// pkg/scheduler/framework/types.go), on top of the library: a container's
// missing cpu or memory request counts at its default; with pod-level
// requests, a default fills in only what nothing in the pod names.
func kubeSchedulerNonZero(pod *corev1.Pod) (milliCPU, memory int64) {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	defaults := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(framework.DefaultMilliCPURequest, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(framework.DefaultMemoryRequest, resource.DecimalSI),
	}
	if resourcehelper.IsPodLevelRequestsSet(pod) {
		for name := range defaults {
			if _, named := reqs[name]; named {
				delete(defaults, name)
			}
		}
	}
	if len(defaults) > 0 {
		reqs = resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{NonMissingContainerRequests: defaults})
	}
	return reqs.Cpu().MilliValue(), reqs.Memory().Value()
}

func TestPodRequestsAgreeWithComponentHelpers(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
	}{
		{"a pod without requests", st.MakePod("p").Req("", "").Obj()},
		{"containers' requests add up", st.MakePod("p").Container("500m", "256Mi").Container("250m", "").Obj()},
		{"an init container larger than the containers",
			st.MakePod("p").Req("500m", "256Mi").InitContainer("1", "128Mi").Obj()},
		{"the doc comment's worked example, with overhead",
			st.MakePod("p").Container("500m", "256Mi").Container("250m", "").InitContainer("1", "128Mi").Overhead("100m").Obj()},
		{"a sidecar before an init container",
			st.MakePod("p").Req("500m", "100Mi").Sidecar("200m", "50Mi").InitContainer("400m", "10Mi").Obj()},
		{"an init container after a sidecar needs room next to it",
			st.MakePod("p").Req("100m", "10Mi").Sidecar("200m", "10Mi").InitContainer("900m", "10Mi").Obj()},
		{"init containers and sidecars interleaved",
			st.MakePod("p").Req("100m", "").InitContainer("2", "1Gi").Sidecar("300m", "").InitContainer("1", "").Sidecar("", "64Mi").Obj()},
		{"an explicit zero request", st.MakePod("p").Req("0", "0").Obj()},
		{"extended resources and hugepages add up in containers and take the largest init container",
			with(st.MakePod("p").ExtendedReq("nvidia.com/gpu", "1").ExtendedReq("hugepages-2Mi", "4Mi").Obj(), func(s *corev1.PodSpec) {
				s.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: resources("nvidia.com/gpu", "2", "hugepages-2Mi", "2Mi")}}}
			})},
		{"ephemeral storage", with(st.MakePod("p").Req("100m", "").Obj(), func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		})},
		{"overhead of cpu and memory", with(st.MakePod("p").Req("100m", "").Obj(), func(s *corev1.PodSpec) {
			s.Overhead = resources("cpu", "250m", "memory", "120Mi")
		})},
		{"a request of a name the scheduler does not account for", with(st.MakePod("p").Req("100m", "").Obj(), func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests["foo"] = resource.MustParse("3")
		})},
		{"pod-level cpu replaces the containers' cpu", podLevel(st.MakePod("p").Req("2", "1Gi").Obj(), "cpu", "500m")},
		{"pod-level cpu and memory with init containers and overhead",
			podLevel(st.MakePod("p").Req("2", "1Gi").InitContainer("3", "2Gi").Overhead("100m").Obj(), "cpu", "1", "memory", "512Mi")},
		{"pod-level hugepages replace the containers' hugepages",
			podLevel(st.MakePod("p").Req("100m", "").ExtendedReq("hugepages-2Mi", "4Mi").Obj(), "memory", "1Gi", "hugepages-2Mi", "8Mi")},
		{"pod-level ephemeral storage alone is not a pod-level request",
			podLevel(with(st.MakePod("p").Req("100m", "").Obj(), func(s *corev1.PodSpec) {
				s.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
			}), "ephemeral-storage", "5Gi")},
		{"pod-level memory, one container naming cpu and one not",
			podLevel(st.MakePod("p").Container("500m", "").Container("", "").Obj(), "memory", "1Gi")},
		{"pod-level memory, no container naming cpu", podLevel(st.MakePod("p").Container("", "").Container("", "").Obj(), "memory", "1Gi")},
		{"pod-level cpu of zero", podLevel(st.MakePod("p").Container("", "").Obj(), "cpu", "0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Through NewResource, as kube-scheduler's Resource.Add: only
			// the names the scheduler accounts for count.
			want := framework.NewResource(resourcehelper.PodRequests(tt.pod, resourcehelper.PodResourcesOptions{}))
			got := framework.PodRequests(tt.pod)
			if got.MilliCPU != want.MilliCPU || got.Memory != want.Memory || got.EphemeralStorage != want.EphemeralStorage ||
				got.AllowedPodNumber != want.AllowedPodNumber || !maps.Equal(got.ScalarResources, want.ScalarResources) {
				t.Errorf("PodRequests = %+v, component-helpers says %+v", got, want)
			}
			wantCPU, wantMemory := kubeSchedulerNonZero(tt.pod)
			if nz := framework.NonZeroPodRequests(tt.pod); nz.MilliCPU != wantCPU || nz.Memory != wantMemory {
				t.Errorf("NonZeroPodRequests = cpu %dm memory %d, kube-scheduler counts cpu %dm memory %d", nz.MilliCPU, nz.Memory, wantCPU, wantMemory)
			}
		})
	}
}
