package framework_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

const mi = 1024 * 1024

func TestPodRequests(t *testing.T) {
	withPodLevel := st.MakePod("p").Req("2", "1Gi").Obj()
	withPodLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}

	tests := []struct {
		name                  string
		pod                   *corev1.Pod
		milliCPU, memory      int64
		nonZeroCPU, nonZeroMe int64
	}{
		{"a pod without requests asks for nothing, but counts 100m and 200Mi when scoring",
			st.MakePod("p").Req("", "").Obj(), 0, 0, 100, 200 * mi},
		{"containers' requests add up",
			st.MakePod("p").Container("500m", "256Mi").Container("250m", "").Obj(), 750, 256 * mi, 750, 456 * mi},
		{"an init container larger than the containers sets the request",
			st.MakePod("p").Req("500m", "256Mi").InitContainer("1", "128Mi").Obj(), 1000, 256 * mi, 1000, 256 * mi},
		{"overhead is added after the init containers are compared (the doc comment's worked example)",
			st.MakePod("p").Container("500m", "256Mi").Container("250m", "").InitContainer("1", "128Mi").Overhead("100m").Obj(), 1100, 256 * mi, 1100, 456 * mi},
		{"a sidecar adds to the containers and to every init container after it",
			st.MakePod("p").Req("500m", "100Mi").Sidecar("200m", "50Mi").InitContainer("400m", "10Mi").Obj(), 700, 150 * mi, 700, 150 * mi},
		{"an init container started after a sidecar needs room next to it",
			st.MakePod("p").Req("100m", "10Mi").Sidecar("200m", "10Mi").InitContainer("900m", "10Mi").Obj(), 1100, 20 * mi, 1100, 20 * mi},
		{"pod-level requests replace the containers' sum for the resources they name",
			withPodLevel, 500, 1024 * mi, 500, 1024 * mi},
		{"an explicit zero request stays zero when scoring",
			st.MakePod("p").Req("0", "0").Obj(), 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := framework.PodRequests(tt.pod)
			if r.MilliCPU != tt.milliCPU || r.Memory != tt.memory {
				t.Errorf("PodRequests = cpu %dm memory %d, want cpu %dm memory %d", r.MilliCPU, r.Memory, tt.milliCPU, tt.memory)
			}
			nz := framework.NonZeroPodRequests(tt.pod)
			if nz.MilliCPU != tt.nonZeroCPU || nz.Memory != tt.nonZeroMe {
				t.Errorf("NonZeroPodRequests = cpu %dm memory %d, want cpu %dm memory %d", nz.MilliCPU, nz.Memory, tt.nonZeroCPU, tt.nonZeroMe)
			}
		})
	}
}

func TestExtendedResourcesAreCounted(t *testing.T) {
	pod := st.MakePod("p").ExtendedReq("nvidia.com/gpu", "2").ExtendedReq("hugepages-2Mi", "4Mi").Obj()
	r := framework.PodRequests(pod)
	if r.ScalarResources["nvidia.com/gpu"] != 2 || r.ScalarResources["hugepages-2Mi"] != 4*mi {
		t.Errorf("scalar resources = %v", r.ScalarResources)
	}
}

func TestNodeInfoKeepsSumsAsPodsComeAndGo(t *testing.T) {
	ni := st.NodeInfo(st.MakeNode("n").Allocatable("4", "8Gi").Obj())
	a := framework.NewPodInfo(st.MakePod("a").Req("1", "1Gi").ExtendedReq("example.com/foo", "1").Obj())
	b := framework.NewPodInfo(st.MakePod("b").Req("", "").Obj())
	ni.AddPodInfo(a)
	ni.AddPodInfo(b)
	// Non-zero cpu: 1000m, plus 100m for a's container without a cpu request, plus 100m for b.
	if ni.Requested.MilliCPU != 1000 || ni.NonZeroRequested.MilliCPU != 1200 || ni.Requested.ScalarResources["example.com/foo"] != 1 {
		t.Fatalf("after adding: requested %+v, non-zero %+v", ni.Requested, ni.NonZeroRequested)
	}
	clone := ni.Clone()
	if !ni.RemovePod(a.Key) || ni.RemovePod(a.Key) {
		t.Fatal("RemovePod should find the pod once")
	}
	if ni.Requested.MilliCPU != 0 || ni.NonZeroRequested.Memory != 200*mi || len(ni.Requested.ScalarResources) != 0 || len(ni.Pods) != 1 {
		t.Errorf("after removing: requested %+v, non-zero %+v, pods %d", ni.Requested, ni.NonZeroRequested, len(ni.Pods))
	}
	if clone.Requested.MilliCPU != 1000 || len(clone.Pods) != 2 || clone.Requested.ScalarResources["example.com/foo"] != 1 {
		t.Errorf("the clone changed with the original: %+v", clone.Requested)
	}
}
