package core

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResizePod(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	burstable := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c1", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "64Mi")}}}},
		Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable}}
	DefaultPodSpec(&burstable.Spec) // as stored
	burstable.Generation = 1
	guaranteed := burstable.DeepCopy()
	guaranteed.Spec.Containers[0].Resources.Limits = list("cpu", "100m", "memory", "64Mi")
	guaranteed.Status.QOSClass = corev1.PodQOSGuaranteed
	asked := func(cur *corev1.Pod, res corev1.ResourceRequirements, mod ...func(*corev1.Pod)) *corev1.Pod {
		p := cur.DeepCopy()
		p.Spec.Containers[0].Resources = res
		for _, m := range mod {
			m(p)
		}
		return p
	}
	tests := []struct {
		name    string
		cur     *corev1.Pod
		next    *corev1.Pod
		wantErr string
		wantGen int64
		want    string // the resources stored, "" to skip
	}{
		{"more cpu, the generation bumped, the image change dropped", burstable,
			asked(burstable, corev1.ResourceRequirements{Requests: list("cpu", "200m", "memory", "64Mi")}, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx" }),
			"", 2, "requests cpu=200m memory=64Mi"},
		{"a limit added requests itself where nothing is requested", burstable,
			asked(burstable, corev1.ResourceRequirements{Requests: list("memory", "64Mi", "cpu", "100m"), Limits: list("memory", "128Mi")}), "", 2, ""},
		{"the same resources change nothing", burstable, burstable.DeepCopy(), "", 1, ""},
		{"only cpu and memory change", burstable,
			asked(burstable, corev1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "64Mi", "ephemeral-storage", "1Gi")}), "spec: Forbidden: only cpu and memory resources are mutable", 0, ""},
		{"a request is not removed", burstable,
			asked(burstable, corev1.ResourceRequirements{Requests: list("cpu", "100m")}), "spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed", 0, ""},
		{"the QoS class stays", guaranteed,
			asked(guaranteed, corev1.ResourceRequirements{Requests: list("cpu", "50m", "memory", "64Mi"), Limits: list("cpu", "100m", "memory", "64Mi")}),
			"spec: Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing", 0, ""},
		{"a request beyond its limit is invalid", guaranteed,
			asked(guaranteed, corev1.ResourceRequirements{Requests: list("cpu", "200m", "memory", "64Mi"), Limits: list("cpu", "100m", "memory", "64Mi")}),
			"must be less than or equal to cpu limit", 0, ""},
		{"containers are not renamed", burstable, asked(burstable, burstable.Spec.Containers[0].Resources, func(p *corev1.Pod) { p.Spec.Containers[0].Name = "c2" }),
			"spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs := resizePod(tc.cur, tc.next, time.Time{})
			if tc.wantErr != "" {
				if !strings.Contains(errs.ToAggregate().Error(), tc.wantErr) {
					t.Fatalf("errors %v, want %q", errs, tc.wantErr)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("errors %v", errs)
			}
			pod := out.(*corev1.Pod)
			if pod.Generation != tc.wantGen || pod.Spec.Containers[0].Image != "busybox" {
				t.Errorf("generation %d, image %s; want %d, busybox", pod.Generation, pod.Spec.Containers[0].Image, tc.wantGen)
			}
			r := pod.Spec.Containers[0].Resources
			if tc.want != "" && "requests cpu="+r.Requests.Cpu().String()+" memory="+r.Requests.Memory().String() != tc.want {
				t.Errorf("stored %v, want %s", r, tc.want)
			}
			if tc.name == "a limit added requests itself where nothing is requested" && r.Requests.Memory().String() != "64Mi" {
				t.Errorf("the memory request should stay 64Mi: %v", r)
			}
		})
	}
}
