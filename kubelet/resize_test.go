package kubelet

import (
	"strings"
	"testing"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/internal/kubelettest"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	"github.com/mkube/mkube/kubelet/lifecycle"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A container's status.resources are its cgroup settings read back, in
// the units of its spec where they agree.
func TestActualResources(t *testing.T) {
	tests := []struct {
		name string
		res  corev1.ResourceRequirements
		have *runtimeapi.LinuxContainerResources
		want string
	}{
		{"settings that match are the spec's own values", corev1.ResourceRequirements{Requests: kubelettest.ResourceList("cpu", "2m", "memory", "64Mi"), Limits: kubelettest.ResourceList("cpu", "10m")},
			kuberuntime.ContainerResources(corev1.Container{Resources: corev1.ResourceRequirements{Requests: kubelettest.ResourceList("cpu", "1m"), Limits: kubelettest.ResourceList("cpu", "5m")}}),
			"requests cpu=2m memory=64Mi limits cpu=10m"},
		{"settings not yet resized are read back", corev1.ResourceRequirements{Requests: kubelettest.ResourceList("cpu", "200m"), Limits: kubelettest.ResourceList("memory", "128Mi")},
			&runtimeapi.LinuxContainerResources{CpuShares: 102, MemoryLimitInBytes: 64 << 20},
			"requests cpu=99m limits memory=64Mi"},
		{"nothing asked, nothing reported", corev1.ResourceRequirements{}, &runtimeapi.LinuxContainerResources{CpuShares: 2}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := actualResources(corev1.Container{Resources: tc.res}, tc.have)
			if s := describeResources(*got); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
			if tc.want == "" && (got.Requests != nil || got.Limits != nil) {
				t.Errorf("empty lists should be nil: %+v", got)
			}
		})
	}
}

func describeResources(r corev1.ResourceRequirements) string {
	s := ""
	for _, part := range []struct {
		what string
		l    corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		if len(part.l) == 0 {
			continue
		}
		if s != "" {
			s += " "
		}
		s += part.what
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := part.l[name]; ok {
				s += " " + string(name) + "=" + q.String()
			}
		}
	}
	return s
}

// The status reports each container's allocation and actual resources,
// and a resize in progress while they differ; a pending resize's
// condition replaces the last one.
func TestSetResourceStatus(t *testing.T) {
	alloc := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Resources: corev1.ResourceRequirements{Requests: kubelettest.ResourceList("cpu", "200m")}},
		{Name: "b"}}}}
	alloc.Generation = 2
	sb := &kubecontainer.PodSandbox{Containers: map[string]*kubecontainer.Container{
		"a": {State: runtimeapi.ContainerState_CONTAINER_RUNNING, Resources: &runtimeapi.LinuxContainerResources{CpuShares: 102}},
		"b": {State: runtimeapi.ContainerState_CONTAINER_RUNNING, Resources: &runtimeapi.LinuxContainerResources{CpuShares: 2}}}}
	now := metav1.Now()
	st := corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "a"}, {Name: "b"}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible}}}
	setResourceStatus(&st, alloc, sb, lifecycle.ResizeCondition(corev1.PodReasonDeferred, "Node didn't have enough resource: cpu"), now)
	a, b := st.ContainerStatuses[0], st.ContainerStatuses[1]
	if a.AllocatedResources.Cpu().String() != "200m" || describeResources(*a.Resources) != "requests cpu=99m" {
		t.Errorf("container a: allocated %v, resources %v", a.AllocatedResources, a.Resources)
	}
	if b.AllocatedResources != nil || b.Resources == nil || b.Resources.Requests != nil {
		t.Errorf("container b, which asks nothing: allocated %v, resources %+v", b.AllocatedResources, b.Resources)
	}
	var types []string
	for _, c := range st.Conditions {
		types = append(types, string(c.Type)+"/"+c.Reason)
		if c.Type != corev1.PodReady && c.ObservedGeneration != 2 {
			t.Errorf("condition %s of generation %d, want 2", c.Type, c.ObservedGeneration)
		}
	}
	if got := strings.Join(types, " "); got != "Ready/ PodResizePending/Deferred PodResizeInProgress/" {
		t.Errorf("conditions %s", got)
	}

	// Once actuated, with nothing pending, the resize conditions go.
	sb.Containers["a"].Resources = kuberuntime.ContainerResources(alloc.Spec.Containers[0])
	setResourceStatus(&st, alloc, sb, nil, now)
	if len(st.Conditions) != 1 || describeResources(*st.ContainerStatuses[0].Resources) != "requests cpu=200m" {
		t.Errorf("after actuation: conditions %v, resources %v", st.Conditions, st.ContainerStatuses[0].Resources)
	}
}
